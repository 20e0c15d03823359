"""Where an evaluation's questions are answered: threads in this process, or actors on a Ray cluster.

Both take the questions still to answer and yield a ``QuestionResult`` as each finishes (in completion
order); the runner checkpoints, orders and scores them the same way whichever engine answered.
"""
