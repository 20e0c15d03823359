"""The ``diva`` settings section of Diva (paper 001)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from tanglerag.config import RAISES_COST, RaisesCost, Section, TokenBudget, TopK


class DivaConfig(Section):
    """Diva (paper 001) and its baselines: long answers to ambiguous questions."""

    top_k: TopK = Field(5, description="passages kept after pruning (and retrieved per query)")
    max_interpretations: Annotated[int, RAISES_COST] = Field(5, strict=True, ge=1, le=20, description="pseudo-interpretations used at most")
    verification: Annotated[Literal["each", "batched"], RaisesCost(("batched", "each"))] = Field(
        "batched", description="each: one yes/no call per interpretation; batched: one call for all")
    demos: Annotated[int, RAISES_COST] = Field(0, strict=True, ge=0, le=20, description="few-shot demonstrations chosen by nearest neighbour from demo_pool")
    demo_pool: Path | None = Field(None, description="ASQA-format file the demonstrations come from (dev split)")
    answer_tokens: TokenBudget = Field(300, description="budget of a long answer with its interpretations")
    step_tokens: TokenBudget = Field(120, description="budget of the ambiguity-type and interpretation calls")
    toc_depth: Annotated[int, RAISES_COST] = Field(3, strict=True, ge=1, le=6, description="ToC: deepest level of clarification")
    toc_nodes: Annotated[int, RAISES_COST] = Field(10, strict=True, ge=1, le=50, description="ToC: most clarification nodes expanded")
