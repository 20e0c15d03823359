"""The ``madam`` settings section of MADAM-RAG."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tanglerag.config import RAISES_COST, Section, TokenBudget


class MadamConfig(Section):
    """MADAM-RAG: agents (one per document) and an aggregator, over debate rounds."""

    rounds: Annotated[int, RAISES_COST] = Field(3, strict=True, ge=1, le=10, description=(
        "debate rounds at most; a round whose agents all keep their answers ends the debate"))
    agent_tokens: TokenBudget = Field(96, description="budget of one agent's answer and reason")
    aggregator_tokens: TokenBudget = Field(192, description="budget of the aggregator's answers and summary")
