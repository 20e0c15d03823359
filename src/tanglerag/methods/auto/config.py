"""The ``auto`` settings section: the routing table and the probe's knobs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from tanglerag.config import Section, TokenBudget

Tangle = Literal["clean", "ambiguous", "conflicting", "low-coverage", "mixed"]
"""clean: the passages agree on one answer; ambiguous: answers about different entities or readings; conflicting:
one entity, answers that disagree; low-coverage: no passage answers; mixed: ambiguous and conflicting at once."""


def _default_routes() -> dict[Tangle, str]:
    # from our dev reports: concat is cheapest where passages agree; COrg keeps one answer per entity
    # (docs/results/corg.md); the post-fusion vote outvotes a misinformed passage (docs/results/post_fusion.md); Diva
    # retrieves again for readings the first retrieval missed (docs/results/diva.md)
    return {"clean": "concat", "ambiguous": "corg", "conflicting": "post-fusion", "low-coverage": "diva",
            "mixed": "corg"}


class AutoConfig(Section):
    """``auto``: a probe of the retrieved passages, then one of the methods by the tangle it found."""

    routes: dict[Tangle, str] = Field(default_factory=_default_routes, description=(
        "the method each tangle is answered with (every tangle needs one): any registered method name, or probe: "
        "answer from the probe's own per-passage reading, with no further call"))
    duplicate_overlap: float = Field(0.8, gt=0, le=1, description=(
        "word-set overlap (Jaccard) above which two passages count as near-duplicates"))
    entity_signals: bool = Field(True, description=(
        "count the named entities the passages name (spaCy, about a second to load once) among the probe's signals"))
    probe_tokens: TokenBudget = Field(24, description="budget per passage of the probe's one batched LLM call")

    @field_validator("routes", mode="before")
    @classmethod
    def _over_defaults(cls, value: Any) -> Any:
        """A settings file or ``--set auto.routes.clean=corg`` changes the routes it names, not the others."""
        return {**_default_routes(), **value} if isinstance(value, dict) else value
