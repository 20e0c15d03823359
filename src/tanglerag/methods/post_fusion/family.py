"""Post-fusion as fallback (paper 004) as a family: its methods, stages, measured structured-output default and
inspector view."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.post_fusion.methods import (
    ConcatPostFusionMethod,
    PostFusionConcatMethod,
    PostFusionMethod,
    PruningMethod,
    SummaryCoTMethod,
)
from tanglerag.methods.post_fusion.metrics import not_majority

FAMILY = Family(
    name="post_fusion",
    methods=(PostFusionMethod, PruningMethod, SummaryCoTMethod, ConcatPostFusionMethod, PostFusionConcatMethod),
    stages=frozenset({"generate", "post_fusion", "distill"}),
    # every PF+Concat call as JSON: EM 58.3 against 45.0 as text on 60 RAMDocs dev questions (docs/results/structured.md)
    structured={"pf+concat": "auto"},
    view=Path(__file__).with_name("view.js"),
    metrics={"nm": not_majority},
)
