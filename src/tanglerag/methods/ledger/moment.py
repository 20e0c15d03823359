"""The moment a question asks about, read only where the question states one.

Only "as of", "as at" and "at the time of" followed by a date set a moment; "now", "currently" and "the latest" ask
for the newest answer, which the ``newest`` policy gives without one. A year after "in", "by", "during" or "on" is
what the question is about ("who won the World Cup in 1998"), not a moment: read as one, it hid a 2018 almanac that
answers it (issue 60). One parser finds the clause for both uses, so the clause taken out of the question sent to
each document (``timeless``) is exactly the one whose date the policies apply (``as_of``).
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass

_DATE = (r"(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<ym>\d{4}-\d{2})|(?P<mdy>[a-z]+\.? \d{1,2},? \d{4})|"
         r"(?P<dmy>\d{1,2} [a-z]+\.? \d{4})|(?P<my>[a-z]+\.?,? \d{4})|(?P<year>\d{4}))(?![\w\u2010-\u2015-])")
_CLAUSE = re.compile(r",?\s*\b(?:as of|as at|at the time of)\s+" + _DATE, re.IGNORECASE)
_FORMATS = {"iso": ("%Y-%m-%d",), "ym": ("%Y-%m",), "mdy": ("%B %d %Y", "%b %d %Y"), "dmy": ("%d %B %Y", "%d %b %Y"),
            "my": ("%B %Y", "%b %Y"), "year": ("%Y",)}
_WHOLE = {"ym": "month", "my": "month", "year": "year"}  # names that stand for a whole month or year, else a day
_DATING = re.compile(r"\b(?:as of|as at|published|updated|revised|dated|checked)(?:\s*:)?(?:\s+(?:on|in))?\s+" + _DATE,
                     re.IGNORECASE)
"""A document's own date in its words: "As of June 12, 2018, ...", "revised in 2019:", "(published on 3 May 2021)",
"Last updated: 2019-05-03"."""
_STAMP_CHARS = 160
"""How far from a passage's start or end a date stamp is looked for: "a work by Brahms published in 1890" in the
middle of an article is what it is about, not when it was written."""


@dataclass(frozen=True)
class AsOf:
    """The moment a question asks about: a day, or the whole of a month or a year (its last day)."""

    last_day: datetime.date
    text: str

    def admits(self, date: datetime.date) -> bool:
        return date <= self.last_day


def _parsed(match: re.Match[str]) -> tuple[datetime.date, str] | None:
    """The date a match names, as its first day and its precision ("day", "month", "year"); None when its words are
    no date ("May 32, 2019")."""
    kind, text = next((k, v) for k, v in match.groupdict().items() if v)
    cleaned = text.replace(",", "").replace(".", "").replace("Sept ", "Sep ").replace("sept ", "sep ")
    for pattern in _FORMATS[kind]:
        try:
            return datetime.datetime.strptime(cleaned, pattern).date(), _WHOLE.get(kind, "day")
        except ValueError:
            continue
    return None


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


def _clauses(question: str) -> list[tuple[re.Match[str], AsOf]]:
    return [(match, moment) for match in _CLAUSE.finditer(question) if (moment := _read(match)) is not None]


def timeless(question: str) -> str:
    """The question without its "as of DATE" clauses: what each document is asked. The moment is the ledger's to
    apply, by the documents' dates; asked with it, the 1.5B model reads a document dated before the moment as not
    answering ("as of 2004" against a 2003 record: "unknown"), so the answer valid then never becomes a claim. A
    clause whose words are no date stays in the question, as it is no moment either."""
    out = question
    for match, _ in reversed(_clauses(question)):
        out = out[:match.start()] + out[match.end():]
    return out.strip() or question


def as_of(question: str) -> AsOf | None:
    """The date a question asks about ("as of 2019", "as of March 2023", "as of 2019-05", "as of May 02, 2019"),
    the last one named; None when it names none."""
    found = _clauses(question)
    return found[-1][1] if found else None


def stated_date(text: str) -> tuple[datetime.date, str] | None:
    """The date a passage gives itself in its words: a cue ("as of", "updated", "published", "revised", "dated",
    "checked") followed by a date, near its start or its end (``_STAMP_CHARS``), the first such; as a document date
    and its precision ("year", "month", "day"). None when it states none, or a date after next year (a number
    after a cue word that is no date: "updated 2500 records"). For documents whose date is in their text only."""
    edges = text if len(text) <= 2 * _STAMP_CHARS else f"{text[:_STAMP_CHARS]}\n{text[-_STAMP_CHARS:]}"
    for match in _DATING.finditer(edges):
        parsed = _parsed(match)
        if parsed is not None and parsed[0].year <= datetime.date.today().year + 1:
            return parsed
    return None
