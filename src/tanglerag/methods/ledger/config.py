"""The ``ledger`` settings section: the resolution policies in order and the thresholds of the evidence."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from tanglerag.config import Section, TokenBudget
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS

Policy = Literal["witnesses", "newest", "authority", "prior", "show-all"]


def _default_policies() -> list[Policy]:
    """Dates first: a newer statement wins over older ones however many repeat them (an amended policy over the
    copies of the old one); where a side has no date, witnesses decide. On RAMDocs, whose documents carry no dates,
    the order changes nothing (docs/results/conflicts.md)."""
    return ["newest", "witnesses", "authority", "show-all"]


class LedgerConfig(Section):
    """``ledger``: claims read one passage a call, independent sources counted without the model, conflicts settled
    by the first policy in ``policies`` that can."""

    policies: list[Policy] = Field(default_factory=_default_policies,  # each once: said in the schema too
                                   min_length=1, json_schema_extra={"uniqueItems": True}, description=(
        "resolution policies tried in order on each conflict until one decides: witnesses (more independent "
        "sources win), newest (by date; 'as of YEAR' in the question picks the answer valid then), authority, "
        "prior (one call: the model's own answer without the passages), show-all (every side disputed)"))
    show_disputed: Literal["never", "independent", "always"] = Field("independent", description=(
        "which answers no policy settled go into the answer text, marked disputed (the report always has them): "
        "never; independent (unless the dispute is between versions of one document, a conflict for certain, "
        "so neither version is asserted; a dispute between independent documents may be two things the model "
        "described alike); always"))
    same_thing: Literal["about", "versions"] = Field("about", description=(
        "when two different answers are about the same thing, so they conflict: about (versions of one document, "
        "or claims whose 'about' match: planted answers are caught, but two people of one name the small model "
        "describes alike are taken for one); versions (only versions of one document: answers of independent "
        "documents stand side by side, so fewer valid answers are lost and more planted ones pass)"))
    duplicate_similarity: float = Field(0.8, gt=0, le=1, description=(
        "text similarity (rapidfuzz ratio of the normalised texts) from which two passages are copies or versions "
        "of one document: one witness, and their differing answers one conflict"))
    about_similarity: float = Field(0.9, gt=0, le=1, description=(
        "similarity of two claims' 'about' (rapidfuzz token set ratio) from which they are about the same thing; "
        "below it their different answers are complementary"))
    claim_tokens: TokenBudget = Field(96, description="budget of one passage's claim (answer, about, quote)")
    prior_tokens: TokenBudget = Field(24, description="budget of the prior policy's closed-book answer")
    authority_tiers: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_AUTHORITY_TIERS), description=(
        "named authority tiers a document's 'authority' may give instead of a number"))

    @field_validator("policies")
    @classmethod
    def _each_once(cls, value: list[Policy]) -> list[Policy]:
        """A policy twice in the order is a typo: the second could never decide what the first did not."""
        repeated = sorted({p for p in value if value.count(p) > 1})
        if repeated:
            raise ValueError(f"policy {repeated[0]!r} is listed twice")
        return value
