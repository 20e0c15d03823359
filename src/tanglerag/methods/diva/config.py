"""The ``diva`` settings section of Diva (paper 001)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from tanglerag.config import NonNegativeInt, PositiveInt, Section


class DivaConfig(Section):
    """Diva (paper 001) and its baselines: long answers to ambiguous questions."""

    top_k: PositiveInt = Field(5, description="passages kept after pruning (and retrieved per query)")
    max_interpretations: PositiveInt = Field(5, description="pseudo-interpretations used at most")
    verification: Literal["each", "batched"] = Field(
        "batched", description="each: one yes/no call per interpretation; batched: one call for all")
    demos: NonNegativeInt = Field(0, description="few-shot demonstrations chosen by nearest neighbour from demo_pool")
    demo_pool: Path | None = Field(None, description="ASQA-format file the demonstrations come from (dev split)")
    answer_tokens: PositiveInt = Field(300, description="budget of a long answer with its interpretations")
    step_tokens: PositiveInt = Field(120, description="budget of the ambiguity-type and interpretation calls")
    toc_depth: PositiveInt = Field(3, description="ToC: deepest level of clarification")
    toc_nodes: PositiveInt = Field(10, description="ToC: most clarification nodes expanded")
