"""Where an evaluation's questions are answered: threads in this process, or actors on a Ray cluster.

Both take the questions still to answer and yield lists of ``QuestionResult`` as they finish (in completion
order: what finished since the runner last asked, or one batch of a Ray actor), so that the runner writes each list
with one fsync before reporting it; it checkpoints, orders and scores them the same way whichever engine answered.
"""
