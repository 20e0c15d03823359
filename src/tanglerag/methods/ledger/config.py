"""The ``ledger`` settings section: the resolution policies in order and the thresholds of the evidence."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tanglerag.config import Section, TokenBudget
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.methods.ledger.rules import SWITCHABLE

Policy = Literal["supersede", "corrections", "releases", "register", "newest", "authority", "witnesses", "provenance", "prior", "show-all"]


def _default_policies() -> list[Policy]:
    """A source's own newer statement first (an amendment supersedes the text it amends, whatever stands beside
    it); then dates across sources, declared trust, independent witnesses, and last how well each side says where it
    comes from (a dated, named source over an undated rumour). Dates and trust are the user's metadata; on RAMDocs,
    whose documents carry none, only witnesses decide (docs/results/conflicts.md)."""
    return ["supersede", "corrections", "releases", "register", "newest", "authority", "witnesses", "provenance",
            "show-all"]


class ProvenanceWeights(BaseModel):
    """The ``provenance`` policy's rank of a document: a weight for naming its source, one for being dated."""

    model_config = ConfigDict(extra="forbid")
    source: float = Field(1.0, ge=0, allow_inf_nan=False)
    date: float = Field(1.0, ge=0, allow_inf_nan=False)


class LedgerConfig(Section):
    """``ledger``: claims read one passage a call, independent sources counted without the model, conflicts settled
    by the first policy in ``policies`` that can."""

    policies: list[Policy] = Field(default_factory=_default_policies,  # each once: said in the schema too
                                   min_length=1, json_schema_extra={"uniqueItems": True}, description=(
        "resolution policies tried in order on each conflict until one decides: supersede (one source's newest "
        "statement supersedes its older ones), corrections (a correction or erratum over what it corrects), releases "
        "(release notes or a changelog over the README), register (an official register over the pages repeating "
        "another value), newest (by date; 'as of DATE' in the question picks the answer valid "
        "then; undated sides are left to the next policy), authority (declared trust, where given), witnesses (more "
        "independent sources win), provenance (a dated, named source over an anonymous or undated one), prior (one "
        "call: the model's own answer without the passages), show-all (every side disputed)"))
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
    relevance: float = Field(0.5, ge=0, le=1, description=(
        "share of the question's content words a passage must hold for its claim to be read and compete (and every "
        "year the question names); a passage about another question is not read, and the trace lists it "
        "(0 reads every passage)"))
    provenance_weights: ProvenanceWeights = Field(default_factory=lambda: ProvenanceWeights(), description=(
        "what the provenance policy weighs: a named source and a date on the side's best document"))
    description_overlap: float = Field(0.4, ge=0, le=1, description=(
        "two sides whose claims' 'about' match are one thing only if their passages share this share of the "
        "smaller side's content words besides the question's and the answers' (two people of one name share few); "
        "0 takes the 'about' alone"))
    claims_from: Literal["quotes", "brief", "together", "separate"] = Field("quotes", description=(
        "where each passage's claim comes from: quotes (the ledger's own call for each passage: the words that "
        "answer, the answer, what it is about); brief (a call for each passage with the question first, so one "
        "question's calls share that prefix, writing the answer and what it is about but no quote: the passage's "
        "sentence that holds the answer stands for it); together (one call over every passage, a line per passage that "
        "answers: its answer and what it is about, the quote then the passage's sentence that holds the answer; "
        "seconds instead of minutes on a CPU); separate (the separate baseline's answer for the passage alone, its descriptor as what "
        "it is about: every answer answering each passage finds, then the policies reject what the evidence "
        "refutes; claims hold no quote, so only an answer whose words are in its passage is grounded)"))
    answer_from: Literal["claims", "passages"] = Field("claims", description=(
        "what the answer is: claims (the kept sides' answers, as the claims read them); passages (one more call: "
        "the model answers from the passages the ledger kept, as concat does, the set-aside lines after it)"))
    vetted_evidence: Literal["passages", "sentences"] = Field("passages", description=(
        "what vetted's one call reads of each passage it shows: passages (its words, cut at methods.passage_words); "
        "sentences (its title and the sentences most about the question, up to ledger.vetted_sentences, in their "
        "order: a shorter prompt whose every line bears on the question)"))
    vetted_sentences: int = Field(3, strict=True, ge=1, le=20, description=(
        "vetted_evidence=sentences: the sentences kept of each passage"))
    claim_tokens: TokenBudget = Field(96, description="budget of one passage's claim (answer, about, quote)")
    together_tokens: TokenBudget = Field(48, description=(
        "claims_from=together: the budget a passage adds to the one call's (a line: answer and about)"))
    prior_tokens: TokenBudget = Field(24, description="budget of the prior policy's closed-book answer")
    authority_tiers: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_AUTHORITY_TIERS), description=(
        "named authority tiers a document's 'authority' may give instead of a number"))

    disabled_rules: list[str] = Field(default_factory=lambda: ["asked-names", "later-subject"], description=(
        "rules of the ledger's rule table (tanglerag.methods.ledger.rules) to turn off, for an ablation: trust, "
        "text-dates, name-dates, document-kinds, asked-names, answer-type, drafts, scope, replaced-value, same-value, or a "
        "policy's name; "
        "vetted's own: as-of, ranking, dates-across, off-topic, overruled, former-values, informal, now, "
        "complementary, asked-scope, later-subject and the others of the table's vetting stage (it also "
        "reads trust, text-dates, name-dates, document-kinds, drafts, supersede, releases, corrections, register and "
        "newest). "
        "asked-names is off by default: on the tune halves it cost right answers (people's documents 25 -> 23 of "
        "45, RAMDocs strict 34.9 -> 30.2) for fewer leaks; later-subject too: one right answer more on the tune "
        "half of people's documents, none on its check half and one fewer on RAMDocs' check half; [] turns both on"))

    @field_validator("disabled_rules")
    @classmethod
    def _known_rules(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - SWITCHABLE)
        if unknown:
            raise ValueError(f"unknown rule {unknown[0]!r} (rules that can be turned off: {', '.join(sorted(SWITCHABLE))})")
        return value

    @field_validator("policies")
    @classmethod
    def _each_once(cls, value: list[Policy]) -> list[Policy]:
        """A policy twice in the order is a typo: the second could never decide what the first did not."""
        repeated = sorted({p for p in value if value.count(p) > 1})
        if repeated:
            raise ValueError(f"policy {repeated[0]!r} is listed twice")
        return value
