"""Resolution policies: each looks at the sides still standing in one conflict and keeps those its evidence
favours, or says why it cannot tell them apart. They are tried in the order ``ledger.policies`` gives until one
leaves a single side (it decided) or ``show-all`` reports the rest as disputed; every trial is recorded.

- ``witnesses``: the sides with the most independent sources stand.
- ``newest``: the newest dated side stands; with "as of YEAR" or "as of May 2, 2019" (or "in", "by", "during", "on")
  in the question, the newest dated by then. Needs a date on every side.
- ``authority``: the side of the most trusted document stands. Needs an authority on every side.
- ``prior``: the side the model's own answer (one call, no passages) names stands, if it names exactly one.
- ``show-all``: every standing side is reported as disputed.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tanglerag.conflicts import ConflictKind, ConflictReport, DocumentMeta, PolicyTrial, Side
from tanglerag.methods.ledger.sides import same_answer
from tanglerag.text import is_unknown

_DATE = (r"(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<mdy>[a-z]+\.? \d{1,2},? \d{4})|(?P<dmy>\d{1,2} [a-z]+\.? \d{4})|"
         r"(?P<year>\d{4}))\b")  # the ways a question names a day or a year
_AS_OF = re.compile(r"\b(?:as of|as at|in|by|during|on)\s+" + _DATE, re.IGNORECASE)
_FORMATS = {"iso": ("%Y-%m-%d",), "mdy": ("%B %d %Y", "%b %d %Y"), "dmy": ("%d %B %Y", "%d %b %Y")}


@dataclass(frozen=True)
class AsOf:
    """The moment a question asks about: a day, or (``year`` only) the whole of a year."""

    last_day: datetime.date
    text: str

    def admits(self, date: datetime.date) -> bool:
        return date <= self.last_day


_STATED_AS_OF = re.compile(r",?\s*\b(?:as of|as at)\s+" + _DATE, re.IGNORECASE)


def timeless(question: str) -> str:
    """The question without its "as of DATE" clause: what each document is asked. The moment is the ledger's to
    apply, by the documents' dates; asked with it, the 1.5B model reads a document dated before the moment as not
    answering ("as of 2004" against a 2003 record: "unknown"), so the answer valid then never becomes a claim. Only
    "as of" and "as at" are taken out: "in 1998" is often what the question is about (the 1998 final)."""
    return _STATED_AS_OF.sub("", question).strip() or question


def as_of(question: str) -> AsOf | None:
    """The date a question asks about ("as of 2019", "as of May 02, 2019"), the last one named; None when it names
    none. A name that is not a date ("in May 32, 2019") is read as no date."""
    for match in reversed(list(_AS_OF.finditer(question))):
        kind, text = next((k, v) for k, v in match.groupdict().items() if v)
        if kind == "year":
            return AsOf(last_day=datetime.date(int(text), 12, 31), text=text)
        cleaned = text.replace(",", "").replace(".", "")
        for pattern in _FORMATS[kind]:
            try:
                day = datetime.datetime.strptime(cleaned, pattern).date()
            except ValueError:
                continue
            return AsOf(last_day=day, text=day.isoformat())
    return None


@dataclass
class Evidence:
    """What policies may consult besides the sides: the question and the moment it asks about, each passage's
    provenance, and the model's own answer, asked at most once a question and only if a policy reaches for it."""

    question: str
    metas: dict[str, DocumentMeta]
    ask_prior: Callable[[], str]
    _prior: list[str] = field(default_factory=list)
    moment: AsOf | None = field(init=False)

    def __post_init__(self) -> None:
        self.moment = as_of(self.question)

    def prior(self) -> str:
        if not self._prior:
            self._prior.append(self.ask_prior())
        return self._prior[0]

    def newest_date(self, side: Side) -> datetime.date | None:
        return max((d for p in side.passages if (d := self.metas[p].date) is not None), default=None)

    def authority(self, side: Side) -> float | None:
        return max((a for p in side.passages if (a := self.metas[p].authority) is not None), default=None)


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


def witnesses(standing: list[Side], evidence: Evidence) -> Ruling:
    return _best(standing, lambda s: s.witnesses, lambda s: str(s.witnesses), "witnesses")


def newest(standing: list[Side], evidence: Evidence) -> Ruling:
    dates = {id(s): d for s in standing if (d := evidence.newest_date(s)) is not None}
    if len(dates) < len(standing):
        return standing, f"no date for {', '.join(s.answer for s in standing if id(s) not in dates)}"
    moment = evidence.moment
    eligible = [s for s in standing if moment is None or moment.admits(dates[id(s)])]
    if moment is not None and not eligible:
        return standing, f"no answer dated by {moment.text}"
    chosen, found = _best(eligible, lambda s: dates[id(s)].toordinal(), lambda s: str(dates[id(s)]),
                          "newest" if moment is None else f"as of {moment.text}: newest")
    if len(chosen) == len(standing):
        return standing, found
    if moment is not None:
        found += "".join(f"; {s.answer} dated after {moment.text}" for s in _left_out(standing, eligible))
    return chosen, found


def authority(standing: list[Side], evidence: Evidence) -> Ruling:
    scores = {id(s): a for s in standing if (a := evidence.authority(s)) is not None}
    if len(scores) < len(standing):
        return standing, f"no authority for {', '.join(s.answer for s in standing if id(s) not in scores)}"
    return _best(standing, lambda s: scores[id(s)], lambda s: f"{scores[id(s)]:g}", "authority")


def prior(standing: list[Side], evidence: Evidence) -> Ruling:
    own = evidence.prior()
    if is_unknown(own):
        return standing, "the model does not know the answer without the passages"
    named = [s for s in standing if same_answer(s.answer, own)]
    if len(named) != 1:
        return standing, f"the model's own answer {own!r} names {'none' if not named else 'several'} of the sides"
    return named, f"the model's own answer is {own!r}"


POLICIES: dict[str, Callable[[list[Side], Evidence], Ruling]] = {
    "witnesses": witnesses, "newest": newest, "authority": authority, "prior": prior}
KIND_WHEN_DECIDED_BY: dict[str, ConflictKind] = {
    "witnesses": "misinformation", "authority": "misinformation", "prior": "misinformation", "newest": "outdated"}


def resolve(sides: list[Side], about: str, policies: list[str], evidence: Evidence) -> ConflictReport:
    """Settle one conflict: sides a policy leaves out are rejected; the one left is kept; the rest, once the
    policies are spent or ``show-all`` is reached, are disputed."""
    standing, trials, decider = list(sides), [], None
    for name in policies:
        if name == "show-all":
            trials.append(PolicyTrial(policy=name, outcome=f"{len(standing)} answers reported as disputed",
                                      decided=True))
            break
        kept, outcome = POLICIES[name](standing, evidence)
        for side in _left_out(standing, kept):
            side.verdict = "rejected"
        standing = kept
        trials.append(PolicyTrial(policy=name, outcome=outcome, decided=len(kept) == 1))
        if len(kept) == 1:
            decider = name
            break
    for side in standing:
        side.verdict = "kept" if decider else "disputed"
    kind = KIND_WHEN_DECIDED_BY[decider] if decider else "conflicting_opinions"
    return ConflictReport(kind=kind, about=about, sides=sides, trials=trials,
                          rule=trials[-1].outcome if decider else "")
