"""Vector stores people already run, behind one contract (``stores/base.py``): answer over their collections."""
