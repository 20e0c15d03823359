"""The ``astute`` settings section of Astute RAG."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tanglerag.config import RAISES_COST, Section, TokenBudget


class AstuteConfig(Section):
    """Astute RAG: passages from the model's memory, consolidation rounds, a reliability-based choice."""

    internal_passages: Annotated[int, RAISES_COST] = Field(1, strict=True, ge=0, le=5, description=(
        "passages the model may write from its own knowledge (it may write fewer, or none)"))
    iterations: Annotated[int, RAISES_COST] = Field(1, strict=True, ge=1, le=5, description=(
        "consolidation rounds before the answer is chosen"))
    passage_tokens: TokenBudget = Field(160, description="budget of the internal passages")
    consolidate_tokens: TokenBudget = Field(320, description="budget of one consolidation round")
    answer_tokens: TokenBudget = Field(128, description="budget of the final choice")
