"""Evaluation: the answer runner every answer method plugs into (``runner``), how each question's passages are built,
checkpoints, and the report writers. A dataset task no answer runner serves is a family's (PCAS's ORCA-ShARC
retrieval evaluation: ``eval/families/pcas.py``)."""
