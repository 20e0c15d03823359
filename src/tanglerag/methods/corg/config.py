"""The ``corg`` settings section of COrg (paper 000)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tanglerag.config import RAISES_COST, RaisesCost, Section, StrictInt, TokenBudget, TopK


class CorgConfig(Section):
    """COrg (paper 000) and its baselines."""

    graph: Annotated[Literal["pairwise", "extract"], RaisesCost(("extract", "pairwise"))] = Field(
        "pairwise", description="pairwise: LLM labels relations (Algorithm 1); extract: one call per context")
    plural: Annotated[Literal["rule", "llm"], RaisesCost(("rule", "llm"))] = Field("rule", description="how a group's question is put in plural form")
    answer_each: Annotated[bool, RAISES_COST] = Field(False, description="answer every kept context in its own call (for models that give "
                                                 "one answer per call); groups still label the parts")
    conflicts: Literal["keep", "support"] = Field(
        "keep", description="keep: every group's answer (the paper); support: of two different answers from contexts "
                            "the graph labels counterfactual, only the one more contexts back (no extra call)")
    answer_tokens: TokenBudget = Field(96, description="budget for a multi-answer reply (one line per answer)")
    retrieve_top: TopK = Field(5, description="contexts the 'retrieve' baseline keeps (the paper's 5)")
    summary_tokens: TokenBudget = 160
    match_threshold: float = Field(0.6, ge=0.0, le=1.0,
                                   description="extract mode: token F1 at which descriptors/answers count as equal")
    seed: StrictInt = 0
