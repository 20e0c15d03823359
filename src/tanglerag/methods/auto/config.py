"""The ``auto`` settings section: the routing table and the probe's knobs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from tanglerag.config import Section, TokenBudget

Tangle = Literal["clean", "ambiguous", "conflicting", "low-coverage", "mixed"]
"""clean: the passages agree on one answer; ambiguous: answers about different entities or interpretations; conflicting:
one entity, answers that disagree; low-coverage: no passage answers; mixed: ambiguous and conflicting at once."""


def _default_routes() -> dict[Tangle, str]:
    # chosen by `tanglerag diagnose` on the first 24 questions of the mixed dev suite and checked on the other 36
    # (docs/results/auto.md): there, with the embedded 1.5B model, COrg's one-line-per-answer output recovered most
    # where the probe found one answer (several of those questions had more) or a mix, and concat where it found
    # entities or a conflict; what it found low-coverage (one tuning question) gave no method the lead: Diva stays
    return {"clean": "corg", "ambiguous": "concat", "conflicting": "concat", "low-coverage": "diva", "mixed": "corg"}


class AutoConfig(Section):
    """``auto``: a probe of the retrieved passages, then one of the methods by the tangle it found."""

    routes: dict[Tangle, str] = Field(default_factory=_default_routes, description=(
        "the method each tangle is answered with (every tangle needs one): any registered method name, or probe: "
        "answer from the answers the probe's call gave per passage, with no further call"))
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
