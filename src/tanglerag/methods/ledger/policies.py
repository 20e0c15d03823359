"""Resolution policies: each looks at the sides still standing in one conflict and keeps those its evidence
favours, or says why it cannot tell them apart. They are tried in the order ``ledger.policies`` gives until one
leaves a single side (it decided) or ``show-all`` reports the rest as disputed; every trial is recorded, and every
side a policy sets aside carries a note saying why, in a person's words.

- ``supersede``: one source (a named ``source``, or versions of one document) stating different answers at
  different dates: its newest statement supersedes its older ones (they are outdated), whatever other sides say.
- ``corrections``: a side a correction or erratum states stands over the sides it corrects (they are outdated).
- ``releases``: release notes or a changelog stand over the README whose value they change (it is outdated).
- ``register``: a side an official register states stands over the pages that repeat another value (misinformation),
  however many copy it.
- ``newest``: the newest dated side stands; with "as of DATE" in the question, the newest dated by then, and sides
  dated after it are set aside. Undated sides neither win nor block it: they stand for the next policy.
- ``authority``: the sides of the most trusted documents (a number or a named tier in the metadata) stand over
  sides with a lower one; sides without one stand for the next policy.
- ``witnesses``: the sides with the most independent sources stand.
- ``provenance``: a side whose document names its source and is dated outranks an anonymous or undated one
  (``ledger.provenance_weights``).
- ``prior``: the side the model's own answer (one call, no passages) names stands, if it names exactly one.
- ``show-all``: every standing side is reported as disputed.
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tanglerag.conflicts import ConflictKind, ConflictReport, DocumentMeta, PolicyTrial, Side
from tanglerag.methods.ledger.config import ProvenanceWeights
from tanglerag.methods.ledger.independence import Independence
from tanglerag.methods.ledger.kinds import DocumentKind
from tanglerag.methods.ledger.moment import AsOf, as_of
from tanglerag.methods.ledger.sides import same_answer
from tanglerag.text import is_unknown


@dataclass
class Evidence:
    """What policies may consult besides the sides: the question and the moment it asks about, each passage's
    provenance and document, and the model's own answer, asked at most once a question and only if a policy reaches
    for it."""

    question: str
    metas: dict[str, DocumentMeta]
    ask_prior: Callable[[], Awaitable[str]]
    found: Independence | None = None
    weights: ProvenanceWeights = field(default_factory=ProvenanceWeights)
    kinds: dict[str, DocumentKind] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    ignored: set[str] = field(default_factory=set)
    """Passages whose own declarations the trust setting ignored."""
    closing: bool = True
    """whether a closing "in MONTH YEAR" is the question's moment (rule ``month-moment``)"""
    _prior: str | None = None
    moment: AsOf | None = field(init=False)

    def __post_init__(self) -> None:
        self.moment = as_of(self.question, self.closing)

    async def recall_prior(self) -> None:
        """Ask the model's own answer unless it was asked already: ``resolve`` awaits this before the ``prior``
        policy, so the one call a question is made where a conflict first reaches it and the policies stay plain
        functions of what is known."""
        if self._prior is None:
            self._prior = await self.ask_prior()

    def prior(self) -> str:
        if self._prior is None:
            raise RuntimeError("the prior policy ran before the model's own answer was asked (recall_prior)")
        return self._prior

    def newest_meta(self, side: Side) -> DocumentMeta | None:
        """The provenance of a side's newest dated passage; None when none is dated."""
        dated = [self.metas[p] for p in side.passages if self.metas[p].date is not None]
        return max(dated, key=lambda m: m.date or datetime.date.min) if dated else None

    def newest_date(self, side: Side) -> datetime.date | None:
        meta = self.newest_meta(side)
        return meta.date if meta is not None else None

    def authority(self, side: Side) -> float | None:
        return max((a for p in side.passages if (a := self.metas[p].authority) is not None), default=None)

    def standing_of(self, side: Side) -> float:
        """How well a side's best document says where it comes from: a named source and a date, weighted."""
        weights = self.weights
        return max((weights.source * (m.source is not None) + weights.date * (m.date is not None)
                    for m in (self.metas[p] for p in side.passages)), default=0.0)

    def lineage(self, passage_id: str) -> tuple[str, str]:
        """Who states a passage: its named source, else its document (copies and versions share one)."""
        source = self.metas[passage_id].source
        if source is not None:
            return "source", source
        document = self.found.document[passage_id] if self.found is not None else passage_id
        return "document", str(document)

    def where(self, passage_id: str) -> str:
        """A passage's file (its path, else its id), as a reason names it."""
        return self.files.get(passage_id, passage_id)

    def provenance(self, side: Side) -> str:
        """Where a side's best-placed document comes from, for a person: "HR handbook, 2024-03-01", "undated"."""
        metas = sorted((self.metas[p] for p in side.passages), key=lambda m: (m.source is None, m.date is None))
        best = metas[0] if metas else DocumentMeta()
        untrusted = sorted({self.where(p) for p in side.passages if p in self.ignored})
        ignored = f"; what {', '.join(untrusted)} declares is not trusted" if untrusted else ""
        return f"{best.source or 'no source named'}, {best.when()}{ignored}"


Ruling = tuple[list[Side], str]
"""The sides that still stand after a policy (all of them: it could not tell them apart), and what it found."""


def _left_out(standing: list[Side], kept: list[Side]) -> list[Side]:
    return [s for s in standing if all(s is not k for k in kept)]


def _best(standing: list[Side], score: Callable[[Side], float], described: Callable[[Side], str], name: str) -> Ruling:
    top = max(score(s) for s in standing)
    kept = [s for s in standing if score(s) == top]
    if len(kept) == len(standing) > 1:
        return standing, f"{name} tie at {described(kept[0])}"
    others = ", ".join(described(s) for s in _left_out(standing, kept))
    return kept, f"{name} {described(kept[0])}" + (f" vs {others}" if others else "")


def _note(sides: list[Side], note: str) -> None:
    for side in sides:
        side.note = note


def supersede(standing: list[Side], evidence: Evidence) -> Ruling:
    """Within each lineage that states two answers at two dates, the statements older than its newest one (by the
    moment, when the question names one) are superseded, and so are those dated after the moment; a side all of whose
    statements are superseded is outdated."""
    statements: dict[tuple[str, str], list[tuple[datetime.date, Side, str]]] = {}
    for side in standing:
        for pid in side.passages:
            if (date := evidence.metas[pid].date) is not None:
                statements.setdefault(evidence.lineage(pid), []).append((date, side, pid))
    superseded: dict[str, str] = {}
    found = []
    for (kind, name), stated in statements.items():
        current = _current(stated, evidence.moment)
        if current is None:
            continue
        source = name if kind == "source" else None
        shown = next(evidence.metas[pid].when() for date, _, pid in stated if date == current)
        for date, _, pid in stated:
            if date != current:
                superseded[pid] = _superseded_note(date, evidence.metas[pid].when(), shown, source, evidence.moment)
        in_force = f"in force as of {evidence.moment.text}" if evidence.moment else "supersedes the rest"
        found.append(f"{source or 'one document'}: {shown} {in_force}")
    outdated = [s for s in standing if s.passages and all(p in superseded for p in s.passages)]
    for side in outdated:
        side.note = superseded[side.passages[0]]
    if not outdated:
        return standing, "no source states different answers at different dates"
    return _left_out(standing, outdated), "; ".join(found)


def _current(stated: list[tuple[datetime.date, Side, str]], moment: AsOf | None) -> datetime.date | None:
    """The date of a lineage's statement in force (the newest by the moment), when the lineage states two answers
    and one statement is in force; else None."""
    if len({id(s) for _, s, _ in stated}) < 2:
        return None
    admitted = [st for st in stated if moment is None or moment.admits(st[0])]
    current = max((d for d, _, _ in admitted), default=None)
    if current is None or len({id(s) for d, s, _ in admitted if d == current}) > 1:
        return None
    return current


def _superseded_note(date: datetime.date, shown: str, current: str, source: str | None, moment: AsOf | None) -> str:
    if moment is not None and not moment.admits(date):
        return f"dated after {moment.text}"
    if source is None:
        return f"outdated: the version of {shown}, superseded by the version of {current}"
    return f"outdated: {source} {shown}, superseded by its {current}"


def newest(standing: list[Side], evidence: Evidence) -> Ruling:
    newest_of = {id(s): m for s in standing if (m := evidence.newest_meta(s)) is not None}
    dates = {key: meta.date for key, meta in newest_of.items() if meta.date is not None}
    if len(dates) < 2:
        return standing, f"no date for {', '.join(s.answer for s in standing if id(s) not in dates)}"
    moment = evidence.moment
    dated = [s for s in standing if id(s) in dates]
    eligible = [s for s in dated if moment is None or moment.admits(dates[id(s)])]
    if not eligible:
        return standing, f"no answer dated by {moment.text if moment else '?'}"
    top = max(dates[id(s)] for s in eligible)
    newer = [s for s in eligible if dates[id(s)] == top]
    late = _left_out(dated, eligible)
    older = _left_out(eligible, newer)
    shown = {key: meta.when() for key, meta in newest_of.items()}  # a year as "2018", not 2018-01-01
    best = shown[id(newer[0])]
    if not late and not older:
        return standing, f"newest tie at {best}"
    for side in older:
        side.note = f"older: {shown[id(side)]}, against {best}"
    for side in late:
        side.note = f"dated after {moment.text if moment else '?'} ({shown[id(side)]})"
    label = "newest" if moment is None else f"as of {moment.text}: newest"
    found = f"{label} {best}" + (f" vs {', '.join(shown[id(s)] for s in older)}" if older else "")
    found += "".join(f"; {s.answer} dated after {moment.text}" for s in late if moment is not None)
    return _left_out(standing, late + older), found


def authority(standing: list[Side], evidence: Evidence) -> Ruling:
    scores = {id(s): a for s in standing if (a := evidence.authority(s)) is not None}
    if len(scores) < 2:
        return standing, f"no authority for {', '.join(s.answer for s in standing if id(s) not in scores)}"
    rated = [s for s in standing if id(s) in scores]
    kept, found = _best(rated, lambda s: scores[id(s)], lambda s: f"{scores[id(s)]:g}", "authority")
    for side in _left_out(rated, kept):
        side.note = f"less trusted: authority {scores[id(side)]:g} against {scores[id(kept[0])]:g}"
    return _left_out(standing, _left_out(rated, kept)), found


def witnesses(standing: list[Side], evidence: Evidence) -> Ruling:
    kept, found = _best(standing, lambda s: s.witnesses, lambda s: str(s.witnesses), "witnesses")
    for side in _left_out(standing, kept):
        side.note = f"fewer independent sources ({side.witnesses} against {kept[0].witnesses})"
    return kept, found


def _by_kind(standing: list[Side], evidence: Evidence, winner: DocumentKind, loser: DocumentKind | None,
             note: str, found: str) -> Ruling:
    """Sides stated by a ``winner`` document stand over the sides stated only by ``loser`` documents (any side
    without a ``winner`` document, when ``loser`` is None, that is not dated after the newest ``winner`` document: a
    2020 erratum does not correct a 2024 handbook); sides of neither kind stand for the next policy."""
    kinds = [{evidence.kinds.get(p) for p in side.passages} for side in standing]
    winning = [side for side, kind in zip(standing, kinds, strict=True) if winner in kind]
    if not winning:
        return standing, f"no {winner} among the sides"
    dates = [d for s in winning for p in s.passages if evidence.kinds.get(p) == winner
             and (d := evidence.metas[p].date) is not None]
    latest = max(dates) if len(dates) == sum(evidence.kinds.get(p) == winner for s in winning for p in s.passages) \
        and dates else None  # an undated winner document bounds nothing
    losing = [side for side, kind in zip(standing, kinds, strict=True) if winner not in kind
              and (loser is None or kind == {loser})
              and (latest is None or (evidence.newest_date(side) or latest) <= latest)]
    if not losing:
        return standing, f"no side the {winner} {found}"
    shown = ", ".join(dict.fromkeys(evidence.where(p) for s in winning for p in s.passages
                                    if evidence.kinds.get(p) == winner))
    _note(losing, f"{note} ({shown})")
    return _left_out(standing, losing), f"{winner} ({shown}) {found} {', '.join(s.answer for s in losing)}"


def corrections(standing: list[Side], evidence: Evidence) -> Ruling:
    return _by_kind(standing, evidence, "correction", None, "outdated: corrected", "corrects")


def releases(standing: list[Side], evidence: Evidence) -> Ruling:
    return _by_kind(standing, evidence, "changelog", "readme", "outdated: changed by the release notes", "changes")


def register(standing: list[Side], evidence: Evidence) -> Ruling:
    return _by_kind(standing, evidence, "register", None, "contradicted by the official register", "contradicts")


def provenance(standing: list[Side], evidence: Evidence) -> Ruling:
    kept, found = _best(standing, evidence.standing_of, lambda s: evidence.provenance(s), "provenance")
    _note(_left_out(standing, kept), "unverified")
    return kept, found


def prior(standing: list[Side], evidence: Evidence) -> Ruling:
    own = evidence.prior()
    if is_unknown(own):
        return standing, "the model does not know the answer without the passages"
    named = [s for s in standing if same_answer(s.answer, own)]
    if len(named) != 1:
        return standing, f"the model's own answer {own!r} names {'none' if not named else 'several'} of the sides"
    _note(_left_out(standing, named), "not what the model knows without the passages")
    return named, f"the model's own answer is {own!r}"


POLICIES: dict[str, Callable[[list[Side], Evidence], Ruling]] = {
    "supersede": supersede, "corrections": corrections, "releases": releases, "register": register, "newest": newest, "authority": authority, "witnesses": witnesses,
    "provenance": provenance, "prior": prior}
KIND_WHEN_DECIDED_BY: dict[str, ConflictKind] = {
    "supersede": "outdated", "corrections": "outdated", "releases": "outdated", "register": "misinformation",
    "newest": "outdated", "witnesses": "misinformation", "authority": "misinformation",
    "provenance": "misinformation", "prior": "misinformation"}


async def resolve(sides: list[Side], about: str, policies: list[str], evidence: Evidence) -> ConflictReport:
    """Settle one conflict: sides a policy leaves out are rejected; the one left is kept; the rest, once the
    policies are spent or ``show-all`` is reached, are disputed. The kind is the deciding policy's; undecided, a
    dispute (``conflicting_opinions``), whatever was set aside on the way. The rule names every policy that set a
    side aside (the amendment's supersession, then the provenance that settled the rumour), in order; what it is
    about is the kept side's."""
    standing, trials, decider, setting_aside = list(sides), [], None, []
    for name in policies:
        if name == "show-all":
            trials.append(PolicyTrial(policy=name, outcome=f"{len(standing)} answers reported as disputed"))
            break
        if name == "prior":
            await evidence.recall_prior()
        kept, outcome = POLICIES[name](standing, evidence)
        for side in _left_out(standing, kept):
            side.verdict = "rejected"
        if len(kept) < len(standing):
            setting_aside.append(outcome)
        standing = kept
        trials.append(PolicyTrial(policy=name, outcome=outcome, decided=len(kept) == 1))
        if len(kept) == 1:
            decider = name
            break
    for side in standing:
        side.verdict = "kept" if decider else "disputed"
        if not decider:
            side.note = "disputed"
    kind: ConflictKind = KIND_WHEN_DECIDED_BY[decider] if decider else "conflicting_opinions"
    about = next((s.about for s in standing if decider and s.about), about)
    return ConflictReport(kind=kind, about=about, sides=sides, trials=trials,
                          rule="; ".join(setting_aside) if decider else "")
