"""The ledger's document rules without its claims: which passages may speak, in what order, and what each is.

``vetted`` reads no claim per passage; it decides from what a passage's document is (its date, read from metadata or
its words; its kind: release notes, correction, register, README, draft; whether the ``trust`` setting let its
declarations stand; its share of the question's words) which passages are left out (a draft the question does not
ask about, a document dated after the question's "as of" moment, an older version of a document retrieved beside a
newer one) and ranks the rest, the passage a careful reader would believe first: on topic before off topic, declared
by a trusted document before one whose declarations were ignored, a correction, release notes or a register before an
ordinary page and a README last, higher authority, then newer before older among the dated ones, an undated one
keeping its place in the search's order (an official page without a date is no less believable for it), and no date
order at all when the question names the year it is about (a 2024 budget's minutes are no better witness of the 2020
festival than its 2020 review). The 1.5B model
answers from the first passage that answers far more often than it weighs dates it is told about, so the ranking is
the rule and the labels (date, kind, "unverified") are there for the reader and the model alike.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from pydantic import Field

from tanglerag.conflicts import DocumentMeta
from tanglerag.methods.ledger.independence import Independence, file_of
from tanglerag.methods.ledger.kinds import DocumentKind
from tanglerag.methods.ledger.moment import AsOf
from tanglerag.text import normalize_answer
from tanglerag.trace import TraceStep
from tanglerag.types import RetrievedPassage

KIND_LABELS: dict[DocumentKind, str] = {"changelog": "release notes", "correction": "correction",
                                        "register": "official register", "readme": "README", "draft": "draft",
                                        "informal": "informal post"}
_KIND_RANK: dict[DocumentKind | None, int] = {"correction": 0, "changelog": 0, "register": 0, None: 1, "readme": 2,
                                              "informal": 2, "draft": 3}
"""A correction, release notes and a register speak before an ordinary page, a README after it (release notes change
what it says), and so does a blog, forum or chat post (rule ``informal``: a newer blog's "12 hours is plenty" ranked
first had the 1.5B model answer it over a guidance note's 24 hours, b-tile-grouting-guidance-1); a draft is left out
unless asked about, and last when it is."""


Kin = dict[str, tuple[int, str, str]]
"""passage id -> (its document: near-identical texts share one; its named source; its title, normalised without its
version words: ``version_free``)"""


def related(kin: Kin, a: str, b: str) -> bool:
    """``Vetting.related``'s test on the passages' ``kin``."""
    (da, sa, ta), (db, sb, tb) = kin.get(a, (-1, "", "")), kin.get(b, (-2, "", ""))
    if sa and sb:
        return sa == sb
    return da == db or (bool(ta) and ta == tb)


@dataclass
class Vetting:
    """The passages in the order they are shown, the ones left out with why, and each shown one's label."""

    shown: list[RetrievedPassage]
    left_out: dict[str, str] = field(default_factory=dict)
    """passage id -> "rule: why" (drafts, as-of, trust, supersede)"""
    labels: dict[str, str] = field(default_factory=dict)
    relevant: set[str] = field(default_factory=set)
    unverified: set[str] = field(default_factory=set)
    off: frozenset[str] = frozenset()
    """rules turned off (``ledger.disabled_rules``): what is set aside afterwards skips them too"""
    kin: Kin = field(default_factory=dict)
    by_date: bool = True
    """whether a newer passage stands over an older related one: not when the question names the year it is about"""
    now: bool = False
    """whether the question asks for the value now ("now", "current", "latest": ``moment.asks_now``): then a newer
    dated passage of any source stands over an older one (rule ``now``), not only one source's newer version"""
    restated: str = ""
    """the rule that rewrote the answer's value, with its words (``unstated-value``), if one did"""
    named: frozenset[str] = frozenset()
    """passages naming every name the question asks about (``relevance.names_every_name``), and ``titled``, those
    whose title does: for rule ``named-newest``, a newer dated one of the first stands over an older one of the
    second of another source (a spec sheet titled for the KM7 that mentions the KM5 is no older KM5 page)"""
    titled: frozenset[str] = frozenset()
    texts: dict[str, str] = field(default_factory=dict)
    """passage id -> its words, for the rules that read what a document names (an erratum, the value it corrects)"""

    def related(self, a: str, b: str) -> bool:
        """Two passages may state one thing's value at two dates: one named source's, one document's, or titled
        alike, and not of two named sources. Passages about two branches, products or towns are none of these, and
        the newer does not supersede the older."""
        return related(self.kin, a, b)

    def document(self, pid: str) -> object:
        """The document a passage is a chunk of (near-identical texts are one), or the passage itself."""
        return self.kin.get(pid, (pid,))[0]

    def without(self, reasons: dict[str, str]) -> Vetting:
        """The vetting with the ``reasons``' passages moved from the shown ones to those left out."""
        return replace(self, shown=[h for h in self.shown if h.passage.id not in reasons],
                       left_out={**self.left_out, **reasons})

    def order(self, passages: list[RetrievedPassage]) -> list[RetrievedPassage]:
        """The answer's passages: the shown ones as numbered in the prompt, then those left out."""
        return self.shown + [h for h in passages if h.passage.id in self.left_out]

    def step(self) -> VettingStep:
        """The trace's record of what was shown, in what order, with which label, and what was left out."""
        return VettingStep(shown=[h.passage.id for h in self.shown], labels=self.labels, left_out=self.left_out,
                           off_topic=[h.passage.id for h in self.shown if h.passage.id not in self.relevant],
                           restated=self.restated)


class VettingStep(TraceStep):
    """What the vetting decided: the passages in the order shown, with their labels, and those left out and why."""

    kind: Literal["vetting"] = "vetting"
    title: ClassVar[str] = "Vetted passages"
    shown: list[str] = Field(default_factory=list, description="passage ids in the order the model saw them")
    labels: dict[str, str] = Field(default_factory=dict, description="passage id -> date, kind, source, unverified")
    left_out: dict[str, str] = Field(default_factory=dict, description="passage id -> the rule that left it out")
    off_topic: list[str] = Field(default_factory=list, description=(
        "shown passages holding too few of the question's words (ledger.relevance): ranked last"))
    restated: str = Field("", description="the rule that rewrote the answer's value and why (unstated-value)")

    def lines(self) -> list[str]:
        out = [f"vetting: {len(self.shown)} shown, {len(self.left_out)} left out"]
        out += [f"  {n}. {pid}" + (f" ({self.labels[pid]})" if pid in self.labels else "")
                + (" - off topic" if pid in self.off_topic else "") for n, pid in enumerate(self.shown, 1)]
        return out + [f"  left out {pid}: {why}" for pid, why in self.left_out.items()] + \
            ([f"  {self.restated}"] if self.restated else [])

    def headline(self) -> str | None:
        said = ([f"left out {len(self.left_out)} ({'; '.join(self.left_out.values())})"] if self.left_out else []) \
            + ([self.restated] if self.restated else [])
        return f"vetting: {'; '.join(said)}" if said else None


@dataclass(frozen=True)
class Documents:
    """What the ledger's rules read from each passage's document, keyed by passage id."""

    metas: dict[str, DocumentMeta]
    kinds: dict[str, DocumentKind]
    relevance: dict[str, float]
    found: Independence
    unverified: set[str]
    trusted: set[str] = field(default_factory=set)
    """Passages under an entry of the ``trust`` setting: with one on topic, a document whose declarations trust
    ignored (one passing itself off as what only the trusted folders may declare) is left out, not merely ranked
    last; the 1.5B model answered from a planted "UPDATED" page ranked fourth of five."""
    notes: list[str] = field(default_factory=list)
    """What the ``trust`` setting ignored or bounded, a line each (the report's ``trust``)."""



def vet(passages: list[RetrievedPassage], docs: Documents, threshold: float, moment: AsOf | None,
        drafts_asked: bool, off: frozenset[str] = frozenset(), by_date: bool = True, now: bool = False) -> Vetting:
    """Leave out what cannot answer the question as asked, rank the rest (the module's docstring). ``off``: rules
    of ``ledger.rules`` turned off (drafts, as-of, supersede, ranking; trust is taken out with the documents').
    ``by_date``: whether dates order the passages (not when the question names the year it is about); ``now``:
    whether the question asks for the value now (``Vetting.now``)."""
    drafts_asked = drafts_asked or "drafts" in off
    moment = None if "as-of" in off else moment
    relevant = {h.passage.id for h in passages if docs.relevance.get(h.passage.id, 0.0) >= threshold}
    vouched = bool(relevant & docs.trusted)
    left_out: dict[str, str] = {}
    for hit in passages:
        pid = hit.passage.id
        date = docs.metas[pid].date
        if docs.kinds.get(pid) == "draft" and not drafts_asked:
            left_out[pid] = "drafts: a draft or proposal, not in force"
        elif moment is not None and date is not None and not moment.admits(date):
            left_out[pid] = f"as-of: dated {date.isoformat()}, after {moment.text}"
        elif pid in docs.unverified and vouched:
            left_out[pid] = "trust: declares what only the trusted folders may, and a trusted document answers"
    if "supersede" not in off and by_date:  # asked about a year, an older version may be the one that answers
        left_out |= _older_versions([h for h in passages if h.passage.id not in left_out], docs)
    kin = {h.passage.id: (docs.found.document[h.passage.id], docs.metas[h.passage.id].source or "",
                          version_free(h.passage.title)) for h in passages}
    kept = [h for h in passages if h.passage.id not in left_out]
    ranked = _ranked(kept, docs, relevant, kin if by_date else None, "dates-across" not in off) \
        if "ranking" not in off else kept
    labels = {h.passage.id: label for h in ranked if (label := _label(h.passage.id, docs))}
    return Vetting(shown=ranked, left_out=left_out, labels=labels, relevant=relevant,
                   unverified=set(docs.unverified), off=off, kin=kin, by_date=by_date,
                   now=now and by_date and "now" not in off,
                   texts={h.passage.id: h.passage.text for h in passages})


_VERSION_WORDS = re.compile(r"\b(?:(?:version|edition|revision|rev|v)\s*\d+(?:\.\d+)*|updated|update|revised|"
                            r"revision|amended|edition|version|(?:19|20)\d{2})\b")
"""What tells one version of a page from another in its title: a mark of revision, a version number ("Version 2",
"v2.1"), a year. Not a plain number ("Route 12", "iPhone 15" name other things) nor "new" ("New York")."""


def version_free(title: str) -> str:
    """A title without the words that tell one version from another ("Patient policies (updated)", "Borrowing
    limits - revised 2024", "Handbook v2"): two documents titled alike but for these are versions of one."""
    return " ".join(_VERSION_WORDS.sub(" ", normalize_answer(title)).split())


def _older_versions(passages: list[RetrievedPassage], docs: Documents) -> dict[str, str]:
    """A version of a document (near-identical text, no two sources named) older than another version retrieved
    beside it. Two sources are two documents however alike their words: pages of one template for two branches. Two
    chunks of one file are parts of it, not versions, whatever their dates (a changelog's chunks of two releases:
    ``release-dates``)."""
    out: dict[str, str] = {}
    for hit in passages:
        pid, date, source = hit.passage.id, docs.metas[hit.passage.id].date, docs.metas[hit.passage.id].source
        newer = [o.passage.id for o in passages if o.passage.id != pid
                 and docs.found.document[o.passage.id] == docs.found.document[pid] and file_of(o) != file_of(hit)
                 and (source is None or docs.metas[o.passage.id].source in (None, source))
                 and (other := docs.metas[o.passage.id].date) is not None and date is not None and other > date]
        if newer:
            out[pid] = f"supersede: an older version (dated {date}) of a newer document"
    return out


def _ranked(kept: list[RetrievedPassage], docs: Documents, relevant: set[str], kin: Kin | None,
            across: bool) -> list[RetrievedPassage]:
    """The module docstring's order: by standing (topic, trust, kind, authority), the search's order within one;
    then, with ``kin`` (dates order them), the dated passages newest first in the places dated ones held, an
    undated one where it was. ``across``: dates order passages of different sources too (rule ``dates-across``);
    without it only those of one source, document or title (``related``). Across sources, a newer page of another
    hand wins where the 1.5B model should answer the value now (freshness v2's plain questions) and loses where
    an older official page should (a newer blog against a guidance note): chosen on the tune halves of both sets
    (docs/conflicts.md)."""
    ranked = sorted(kept, key=lambda hit: _standing(hit, docs, relevant))
    if kin is None:
        return ranked
    out = list(ranked)
    dated = [h.passage.id for h in ranked if docs.metas[h.passage.id].date is not None]
    for family in [set(dated)] if across else _families(dated, kin):
        places = [i for i, hit in enumerate(ranked) if hit.passage.id in family]
        newest = sorted((ranked[i] for i in places), key=lambda h: (_standing(h, docs, relevant),
                                                                    -(docs.metas[h.passage.id].date or
                                                                      datetime.date.min).toordinal()))
        for place, hit in zip(places, newest, strict=True):
            out[place] = hit
    return out


def _families(ids: list[str], kin: Kin) -> list[set[str]]:
    """The passages grouped by ``related``, joined through one another (a source's two pages and a copy of one)."""
    families: list[set[str]] = []
    for pid in ids:
        joined = [f for f in families if any(related(kin, pid, other) for other in f)]
        families = [f for f in families if f not in joined] + [set().union({pid}, *joined)]
    return families


def _standing(hit: RetrievedPassage, docs: Documents, relevant: set[str]) -> tuple[float, ...]:
    """What ranks a passage before dates do: lower stands higher."""
    pid = hit.passage.id
    return (pid not in relevant, pid in docs.unverified, _KIND_RANK[docs.kinds.get(pid)],
            -(docs.metas[pid].authority or 0.0))


def _label(pid: str, docs: Documents) -> str:
    """What a reader should know of the passage before its words: its date, kind and source, unverified."""
    meta = docs.metas[pid]
    parts = []
    if meta.date is not None:
        parts.append(meta.when())
    if (kind := docs.kinds.get(pid)) is not None:
        parts.append(KIND_LABELS[kind])
    if meta.source:
        parts.append(meta.source)
    if pid in docs.unverified:
        parts.append("unverified")
    return "; ".join(parts)
