"""The moment a question asks about, read only where the question states one.

Only "as of", "as at" and "at the time of" followed by a date set a moment, or a question opening on "In DATE," or
closing on "in", "during" or "on" a month or a day (rule ``month-moment``); "now", "currently" and "the latest" ask for the
newest answer, which the ``newest`` policy gives without one. A bare year after "in", "by", "during" or "on" is what
the question is about ("who won the World Cup in 1998"), not a moment: read as one, it hid a 2018 almanac that
answers it (issue 60). One parser finds the clause for both uses, so the clause taken out of the question sent to
each document (``timeless``) is exactly the one whose date the policies apply (``as_of``).
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass, replace

from tanglerag.dating import DATE as _DATE
from tanglerag.dating import parsed as _parsed
from tanglerag.dating import stated_date

__all__ = ["AsOf", "as_of", "asks_now", "names_a_year", "stated_date", "timeless"]

_CLAUSE = re.compile(r",?\s*\b(?:as of|as at|at the time of)\s+" + _DATE, re.IGNORECASE)
_LEADING = re.compile(r"^\s*(?:in|during|by)\s+" + _DATE + r"\s*,\s*", re.IGNORECASE)
""""as of DATE" anywhere (``_CLAUSE``), or a question opening on "In DATE," ("In June 2022, how many nights could a guest park?"):
set apart by its comma, the date says when the question asks about, where "who won the World Cup in 1998" names the
final it is about."""
_CLOSING = re.compile(r"\s+(?:in|during|on)\s+" + _DATE + r"(?=\s*\??\s*$)", re.IGNORECASE)
"""A question closing on "in", "during" or "on" a month or a day ("What was glimmet's default JPEG quality in February
2024?"): a value at a moment, not an event named by its year; read as the question's topic, it asked every passage to
name 2024 and left the changelog of 2023 that answers it off topic (f-glimmet-cli-2). A bare year stays the topic.
Not "by" ("expected by December 2025" names a deadline). An event named by its month ("the election held in May
2024") is read as a moment too: documents dated more than a month after it are set aside."""
@dataclass(frozen=True)
class AsOf:
    """The moment a question asks about: a day, or the whole of a month or a year (its last day)."""

    last_day: datetime.date
    text: str
    reported_days: int = 0
    """How long after the moment a document still speaks of it (``text`` says so): a question closing on a month asks
    what that month saw, and the month's report comes out after it ("How many monthly active users did Tallyloom have
    in May 2024?", answered by the May investor update of 4 June, d-startup-metrics-1)."""

    def admits(self, date: datetime.date) -> bool:
        return date <= self.last_day + datetime.timedelta(days=self.reported_days)


def _read(match: re.Match[str]) -> AsOf | None:
    """The moment a clause names (a month or a year: its last day), or None when its words are no date."""
    parsed = _parsed(match)
    if parsed is None:
        return None
    day, precision = parsed
    if precision == "year":
        return AsOf(last_day=day.replace(month=12, day=31), text=day.strftime("%Y"))
    if precision == "month":
        last = calendar.monthrange(day.year, day.month)[1]
        return AsOf(last_day=day.replace(day=last), text=day.strftime("%Y-%m"))
    return AsOf(last_day=day, text=day.isoformat())


def _clauses(question: str, closing: bool = True) -> list[tuple[re.Match[str], AsOf]]:
    """``closing``: whether a closing "in MONTH YEAR" is a moment too (rule ``month-moment``)."""
    ends = [(m, parsed[1]) for m in _CLOSING.finditer(question)
            if (parsed := _parsed(m)) is not None and parsed[1] != "year"] if closing else []
    months = {match for match, precision in ends if precision == "month"}
    found = [*_LEADING.finditer(question), *_CLAUSE.finditer(question), *(match for match, _ in ends)]
    return [(match, _reported(moment) if match in months else moment)
            for match in sorted(found, key=lambda m: m.start()) if (moment := _read(match)) is not None]


def _reported(month: AsOf) -> AsOf:
    """A month asked about by a question closing on it, with the month after it when its report comes out."""
    return replace(month, reported_days=_REPORTED_DAYS, text=f"{month.text} and the month after")


_REPORTED_DAYS = 31
"""``AsOf.reported_days`` for a question closing on its month ("YYYY-MM"): a month's report is out within the next
month. Not for a day: what held on 3 May 2022 is not reported a month later."""


def timeless(question: str, closing: bool = True) -> str:
    """The question without its "as of DATE" clauses: what each document is asked. The moment is the ledger's to
    apply, by the documents' dates; asked with it, the 1.5B model reads a document dated before the moment as not
    answering ("as of 2004" against a 2003 record: "unknown"), so the answer valid then never becomes a claim. A
    clause whose words are no date stays in the question, as it is no moment either."""
    out = question
    for match, _ in reversed(_clauses(question, closing)):
        out = out[:match.start()] + out[match.end():]
    return re.sub(r"^[\s,;:]+", "", out).strip() or question  # "As of 2024, what ...": no leading comma


_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


def names_a_year(question: str, closing: bool = True) -> bool:
    """Whether the question, its "as of" clauses aside, names a year it is about ("How many came to the 2020
    festival?"): then a document's date says nothing of how well it answers."""
    return bool(_YEAR.search(timeless(question, closing)))


_NOW = re.compile(r"\b(?:now|nowadays|current|currently|latest|today|these days|at the moment|at present|presently|"
                  r"most recent|newest|up to date|still)\b", re.IGNORECASE)


def asks_now(question: str) -> bool:
    """Whether the question asks for the value that holds now ("What is Greyford's population now?", "the latest
    stable version", "the current daily allowance"): then any older dated page's other value is outdated, whoever
    wrote it. A question without these words may be about a value that never changes, or one of many versions."""
    return bool(_NOW.search(question))


def as_of(question: str, closing: bool = True) -> AsOf | None:
    """The date a question asks about ("as of 2019", "as of March 2023", "as of 2019-05", "as of May 02, 2019"),
    the last one named; None when it names none."""
    found = _clauses(question, closing)
    return found[-1][1] if found else None
