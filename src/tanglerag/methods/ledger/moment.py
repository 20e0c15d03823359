"""The moment a question asks about, read only where the question states one.

Only "as of", "as at" and "at the time of" followed by a date set a moment; "now", "currently" and "the latest" ask
for the newest answer, which the ``newest`` policy gives without one. A year after "in", "by", "during" or "on" is
what the question is about ("who won the World Cup in 1998"), not a moment: read as one, it hid a 2018 almanac that
answers it (issue 60).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

_DATE = (r"(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<mdy>[a-z]+\.? \d{1,2},? \d{4})|(?P<dmy>\d{1,2} [a-z]+\.? \d{4})|"
         r"(?P<my>[a-z]+\.? \d{4})|(?P<year>\d{4}))\b")  # the ways a question names a day, a month or a year
_STATED = r"\b(?:as of|as at|at the time of)\s+"
_AS_OF = re.compile(_STATED + _DATE, re.IGNORECASE)
_CLAUSE = re.compile(r",?\s*" + _STATED + _DATE, re.IGNORECASE)
_FORMATS = {"iso": ("%Y-%m-%d",), "mdy": ("%B %d %Y", "%b %d %Y"), "dmy": ("%d %B %Y", "%d %b %Y"),
            "my": ("%B %Y", "%b %Y")}


@dataclass(frozen=True)
class AsOf:
    """The moment a question asks about: a day, or (``year`` only) the whole of a year."""

    last_day: datetime.date
    text: str

    def admits(self, date: datetime.date) -> bool:
        return date <= self.last_day


def timeless(question: str) -> str:
    """The question without its "as of DATE" clause: what each document is asked. The moment is the ledger's to
    apply, by the documents' dates; asked with it, the 1.5B model reads a document dated before the moment as not
    answering ("as of 2004" against a 2003 record: "unknown"), so the answer valid then never becomes a claim."""
    return _CLAUSE.sub("", question).strip() or question


def as_of(question: str) -> AsOf | None:
    """The date a question asks about ("as of 2019", "as of March 2023", "as of May 02, 2019"), the last one named;
    None when it names none. A name that is not a date ("as of May 32, 2019") is read as no date."""
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
            if kind == "my":  # a month: the whole of it
                following = (day.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
                return AsOf(last_day=following - datetime.timedelta(days=1), text=day.strftime("%Y-%m"))
            return AsOf(last_day=day, text=day.isoformat())
    return None
