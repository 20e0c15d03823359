"""The ``cdit`` settings section of CDIT (paper 003)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tanglerag.config import Section, TokenBudget


class CditConfig(Section):
    """CDIT (paper 003): judge retrieved passages against the question, discard and trim."""

    cmd: Literal["phi1", "phi1+phi2"] = Field(
        "phi1", description="phi1: subject, predicate, object must match; phi1+phi2: attributives and adverbials too")
    judge: Literal["llm", "spacy"] = Field("llm", description="llm: the configured LLM; spacy: dependency parses, no LLM")
    spacy_threshold: float = Field(0.5, ge=0.0, le=1.0, description="spacy judge: embedding similarity of equal nouns")
    batched: bool = Field(False, description="judge all passages in one call instead of one call each")
    witnesses: int = Field(2, strict=True, ge=1, le=100, description="witnesses before a link is cut (1 reproduces the public code)")
    record: bool = Field(True, description="record witnesses in the index folder's trim log (when it has one)")
    answer_method: str = Field("concat", description="the method that answers from the consistent passages")
    determiner: bool = Field(True, description="reuse the verdicts of a close enough query judged before")
    reuse_threshold: float = Field(0.95, ge=0.0, le=1.0, description="determiner: cosine similarity of a close query")
    judge_tokens: TokenBudget = Field(4, description="budget of one true/false judgment")
