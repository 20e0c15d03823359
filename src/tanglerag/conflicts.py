"""What the evidence of one answer says, and where it disagrees: claims, sides, the conflict report, and the
provenance of the documents behind them.

Why a core module: a method that resolves conflicts (``ledger``) records its report here, and the layers that show
answers (``ask --json``, ``trace show``, the inspector, eval predictions) read the same typed objects, whatever method
wrote them. A document's date, source and authority are parsed from its metadata here and nowhere else
(``DocumentMeta.from_metadata``), so the index, citations and the resolution policies read them alike; the ledger
alone also dates a passage whose metadata has no date by the date its words give it, marked ``date_from: text`` in
``meta``.

Kinds follow the taxonomy of "DRAGged into Conflicts" (Google, 2025): ``none`` (the evidence agrees),
``complementary`` (different answers about different things, all valid), ``conflicting_opinions`` (a dispute the
evidence cannot settle), ``outdated`` (an older version gave way to a newer one) and ``misinformation`` (a side the
evidence rejects).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.errors import InputError
from tanglerag.text import normalize_answer
from tanglerag.trace import TraceStep

ConflictKind = Literal["none", "complementary", "conflicting_opinions", "outdated", "misinformation"]
Verdict = Literal["kept", "rejected", "disputed"]
Precision = Literal["year", "month", "day"]

DEFAULT_AUTHORITY_TIERS: dict[str, float] = {"official": 3.0, "reference": 2.0, "news": 1.0, "community": 0.0}
"""Named authority tiers and the numbers they stand for; a settings section may map others."""

_YEAR = re.compile(r"^\d{4}$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


class DocumentMeta(BaseModel):
    """A document's provenance, read from a passage's free ``metadata`` dict; every field may be missing."""

    date: datetime.date | None = None
    date_precision: Precision | None = Field(None, description="how much of the date was given (a year: Jan 1)")
    source: str | None = Field(None, description="publisher, site or file; documents of one source are one witness")
    authority: float | None = Field(None, description="higher is more trusted; a named tier is mapped to a number")
    meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any],
                      tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> DocumentMeta:
        """The fields ``date``, ``source``, ``authority`` and ``meta`` of ``metadata`` (other keys are left alone).

        Raises InputError naming the field and the value that cannot be read: a wrong date or an unknown tier must
        not pass as no date or no authority."""
        date, precision = parse_date(metadata.get("date"))
        source = metadata.get("source")
        if source is not None and not isinstance(source, str):
            raise InputError(f"metadata field 'source': expected text, got {source!r}")
        meta = metadata.get("meta") or {}
        if not isinstance(meta, dict):
            raise InputError(f"metadata field 'meta': expected an object, got {meta!r}")
        return cls(date=date, date_precision=precision, source=(source or "").strip() or None,
                   authority=parse_authority(metadata.get("authority"), tiers), meta=meta)

    @property
    def year(self) -> int | None:
        return self.date.year if self.date else None

    def when(self) -> str:
        """The date as precisely as it was given ("2024", "2024-05", "2024-05-03"), or "undated": a year is stored as
        its 1 January, which a reader must not take for a day it was written."""
        if self.date is None:
            return "undated"
        return {"year": f"{self.date:%Y}", "month": f"{self.date:%Y-%m}"}.get(self.date_precision or "day",
                                                                              self.date.isoformat())

    def is_empty(self) -> bool:
        return self.date is None and self.source is None and self.authority is None and not self.meta


def parse_date(value: Any) -> tuple[datetime.date | None, Precision | None]:
    """An ISO date (``2024-05-03``, a datetime's date part), a month (``2024-05``) or a year (``2024``, 2024)."""
    if value is None or value == "":
        return None, None
    if isinstance(value, datetime.datetime):
        return value.date(), "day"
    if isinstance(value, datetime.date):
        return value, "day"
    text = str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else None
    try:
        if text is not None and _YEAR.match(text):
            return datetime.date(int(text), 1, 1), "year"
        month = _YEAR_MONTH.match(text or "")
        if month:
            return datetime.date(int(month[1]), int(month[2]), 1), "month"
        if text is not None:
            return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).date(), "day"
    except ValueError:
        pass
    raise InputError(f"metadata field 'date': cannot read {value!r} as an ISO date (YYYY-MM-DD or YYYY-MM) or a year")


def parse_authority(value: Any, tiers: Mapping[str, float]) -> float | None:
    """A finite number, or a tier's name (any case) that ``tiers`` maps to one: NaN compares false with everything,
    so a NaN authority would neither win nor lose and an infinite one would win every dispute."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            number = math.inf
        if not math.isfinite(number):
            raise InputError(f"metadata field 'authority': {number} is not a finite number")
        return number
    if isinstance(value, str):
        found = {name.lower(): number for name, number in tiers.items()}.get(value.strip().lower())
        if found is not None:
            return float(found)
        known = ", ".join(sorted(tiers)) or "none"
        raise InputError(f"metadata field 'authority': unknown tier {value!r} (a number, or one of: {known})")
    raise InputError(f"metadata field 'authority': expected a number or a tier name, got {value!r}")


def quote_in_passage(quote: str, passage: str) -> bool:
    """Whether ``quote`` is part of ``passage`` once both are normalised (case, punctuation, articles, spaces): the
    deterministic check that a claim was read, not made up."""
    wanted = normalize_answer(quote)
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(passage)} "


def answer_in_passage(answer: str, passage: str) -> bool:
    """Whether every word of the normalised ``answer`` occurs in the normalised ``passage``: a small model often
    rewords the sentence it was asked to copy, yet an answer none of whose words the passage holds was not read
    there."""
    wanted = normalize_answer(answer).split()
    return bool(wanted) and set(wanted) <= set(normalize_answer(passage).split())


class Claim(BaseModel):
    """One thing a passage says in answer to the question."""

    answer: str
    about: str = Field("", description="who or what the answer is about, as the passage names it")
    quote: str = Field("", description="the words of the passage that state it")
    passage_id: str
    supported: bool = Field(False, description="the quote was found in the passage (after normalising)")
    answer_found: bool = Field(False, description="every word of the answer is in the passage (after normalising)")
    relevance: float = Field(1.0, description="share of the question's content words its passage holds")
    relevant: bool = Field(True, description="its passage is about the question asked (ledger.relevance)")
    dropped_by: str = Field("", description=(
        "the rule that keeps this claim from competing and why (answer-type, drafts); empty when none did"))
    read_as: str = Field("", description=(
        "the rule that read the claim's answer as another value and why (replaced-value); empty when none did"))

    @property
    def grounded(self) -> bool:
        """The passage holds the claim: its quote, or at least the answer's words. Only grounded claims witness."""
        return self.supported or self.answer_found

    @property
    def competes(self) -> bool:
        """A claim that stands for an answer: grounded in a passage about the question asked, and kept by every
        claim rule."""
        return self.grounded and self.relevant and not self.dropped_by


LATER_NOTE = "dated after"
"""How the date policies begin the note of a side dated after the question's moment (``methods/ledger/policies``)."""


class Side(BaseModel):
    """One answer and the claims behind it; ``witnesses`` counts independent sources, not passages."""

    answer: str
    about: str = ""
    claims: list[Claim] = Field(default_factory=list)
    passages: list[str] = Field(default_factory=list)
    witnesses: int = 0
    verdict: Verdict = "kept"
    note: str = Field("", description="why a policy set it aside or left it disputed, in a person's words")

    @property
    def label(self) -> str:
        """The verdict as a person reads it: ``later`` for a side set aside only because it is dated after the moment
        the question asks about ("as of 2024": the 2025 amendment is not false, it is later), else the verdict."""
        return "later" if self.verdict == "rejected" and self.note.startswith(LATER_NOTE) else self.verdict


class PolicyTrial(BaseModel):
    """What one resolution policy said about a conflict: ``decided`` when it settled it."""

    policy: str
    outcome: str
    decided: bool = False


class ConflictReport(BaseModel):
    """One point the evidence answers in more than one way: its kind, the sides with their verdicts, the policies
    tried in order, and the rule that decided (empty when none did)."""

    kind: ConflictKind
    about: str = ""
    sides: list[Side] = Field(default_factory=list)
    trials: list[PolicyTrial] = Field(default_factory=list)
    rule: str = ""
    off_answer: bool = Field(default=False, exclude_if=lambda off: not off, description=(
        "the answer, read by the model from the passages, names none of this report's answers (a complementary "
        "report: fewer than two): the report stays in the trace but does not make the question's kind"))

    def by_verdict(self, verdict: Verdict) -> list[Side]:
        return [side for side in self.sides if side.verdict == verdict]


def _support_mark(claim: Claim) -> str:
    off_topic = "" if claim.relevant else f" [about another question: relevance {claim.relevance:.2f}]"
    off_topic += f" [{claim.dropped_by}]" if claim.dropped_by else ""
    off_topic += f" [{claim.read_as}]" if claim.read_as else ""
    if claim.supported:
        return off_topic
    return off_topic + (" [quote not in the passage]" if claim.answer_found
                        else " [unsupported: neither quote nor answer found]")


_SEVERITY: dict[ConflictKind, int] = {"none": 0, "complementary": 1, "outdated": 2, "misinformation": 3,
                                      "conflicting_opinions": 4}


class ConflictStep(TraceStep):
    """The claims a method read, the documents' provenance, and a report for every point where they disagree."""

    kind: Literal["conflicts"] = "conflicts"
    title: ClassVar[str] = "Claims and conflicts"
    claims: list[Claim] = Field(default_factory=list)
    reports: list[ConflictReport] = Field(default_factory=list)
    documents: dict[str, DocumentMeta] = Field(default_factory=dict, description="passage id -> its provenance, "
                                               "for passages that have any")
    policies: list[str] = Field(default_factory=list, description="the resolution policies, in the order tried")
    copies: list[list[str]] = Field(default_factory=list, description=(
        "passages that are copies or versions of one document (one witness), oldest first where dated"))
    unread: list[str] = Field(default_factory=list, description="passages whose claim could not be read")
    off_topic: list[str] = Field(default_factory=list, description=(
        "passages holding too few of the question's words (ledger.relevance): no claim is read from them, as none "
        "of theirs would compete"))
    withheld: list[str] = Field(default_factory=list, description="disputed answers left out of the answer text")
    kinds: dict[str, str] = Field(default_factory=dict, description=(
        "passage id -> what its document is (changelog, readme, correction, draft, register), where it says"))
    trust: list[str] = Field(default_factory=list, description=(
        "declarations the trust setting ignored or bounded, and sources claimed from two folders"))

    @property
    def overall(self) -> ConflictKind:
        """The question's kind: its most serious report's (an unsettled dispute first)."""
        return max((r.kind for r in self.reports if not r.off_answer), key=_SEVERITY.__getitem__, default="none")

    def lines(self) -> list[str]:
        supported = sum(c.supported for c in self.claims)
        policies = ", ".join(self.policies) or "none"
        out = [f"conflicts: {self.overall} ({len(self.claims)} claim(s), {supported} quoted; policies {policies})"]
        out += [f"  {c.passage_id}: {c.answer} ({c.about or '?'})" + _support_mark(c) for c in self.claims]
        out += [f"  {pid}: not read (about another question)" for pid in self.off_topic]
        out += [f"  document {pid}: {kind}" for pid, kind in self.kinds.items()]
        out += [f"  trust: {line}" for line in self.trust]
        for report in self.reports:
            out.append(f"  {report.kind}{f' about {report.about}' if report.about else ''}: "
                       f"{report.rule or 'no rule decided'}{' (not about the answer)' if report.off_answer else ''}")
            out += [f"    {side.verdict}: {side.answer} - {side.witnesses} witness(es) <- {', '.join(side.passages)}"
                    + (f" ({side.note})" if side.note and side.verdict != "kept" else "") for side in report.sides]
            out += [f"    {t.policy}: {t.outcome}" for t in report.trials]
        return out

    def headline(self) -> str | None:
        contested = [r for r in self.reports if r.kind != "complementary" and not r.off_answer]
        if not contested:
            return None
        rejected = sum(len(r.by_verdict("rejected")) for r in contested)
        disputed = sum(len(r.by_verdict("disputed")) for r in contested)
        held = f" ({len(self.withheld)} held back)" if self.withheld else ""
        return (f"sources disagree ({self.overall}): {rejected} answer(s) rejected, {disputed} disputed{held}; "
                + "; ".join(r.rule for r in contested if r.rule))
