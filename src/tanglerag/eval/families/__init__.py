"""Evaluations that belong to one family, one module per family: a dataset task it declares (``Family.tasks``) or
a reading of eval runs made with its methods.

They live here rather than in the family's folder because they build a runtime and read run folders, which sit above
``methods/``; the scoring and the trace steps they read stay in the family's folder.
"""
