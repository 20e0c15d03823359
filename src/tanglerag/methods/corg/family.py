"""COrg (paper 000) as a family: the method and its six baselines, the ``corg`` section (every field settable per
question), stages, measured structured-output defaults and inspector view."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.corg.baselines import (
    KMeansMethod,
    OneCallBaseline,
    RandomMethod,
    RetrieveMethod,
    SeparateMethod,
    SummarizeMethod,
)
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.method import CorgMethod

FAMILY = Family(
    name="corg",
    methods=(CorgMethod, OneCallBaseline, RetrieveMethod, SummarizeMethod, RandomMethod, KMeansMethod, SeparateMethod),
    settings=CorgConfig,
    stages=frozenset({"organize", "rerank", "summarize", "generate"}),
    options=tuple(CorgConfig.model_fields),
    # the multi-answer call as JSON (D-F1 37.4 against 32.9 on 100 RAMDocs dev questions) and the graph as text,
    # asked again as JSON where a relation cannot be read (0 of 500 unread against 31 of 506); the all-JSON graph
    # kept fewer contexts apart and lost answers (docs/results/structured.md)
    structured={"corg": {"generate": "auto", "organize": "repair"}},
    view=Path(__file__).with_name("view.js"),
)
