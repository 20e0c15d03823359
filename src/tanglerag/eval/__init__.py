"""Evaluation: the answer runner every answer method plugs into (``runner``), the retrieval runner (PCAS on
ORCA-ShARC), how each question's passages are built, and the report writers."""
