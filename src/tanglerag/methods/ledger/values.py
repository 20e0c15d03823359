"""Answers read as values: a quantity with its unit, money in a currency, a count, a date. Two answers that name one
value in other words ("30 minutes" / "half an hour", "1.5 kg" / "1,500 g", "2,300" / "2.3k", "EUR 40" / "40 euros",
"3 weeks" / "21 days") are one side, not a dispute; and a question that asks for an amount of one kind (a duration,
a price, a weight) is not answered by a claim of another kind, which then decides nothing.

Libraries do the reading: ``text2num`` turns number words into digits, ``pint`` reads units and converts them to
base units, ``price-parser`` finds amounts and currencies, ``dateutil`` reads dates written out. Only what they do
not cover is ours: the fractions a person says ("half an hour"), magnitude suffixes ("2.3k", "1.2 million") and
currency names ("euros").
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

ValueKind = Literal["quantity", "money", "count", "date", "clock"]


_ROUNDED = 0.01
"""How far apart a distance, weight or volume written in two different units may be and still be one value: one of
them was converted and rounded ("the 16 km Reservoir Loop" is "just under 10 miles", 16.09 km, f-millbeck-runners-2).
In one unit ("2,140 t" and "2,130 t"), and for every other kind (money, counts, durations, percentages,
temperatures, times of day, dates), values are compared exactly."""
_CONVERTED = frozenset({"length", "mass", "volume"})


@dataclass(frozen=True)
class Value:
    """One answer's value: its kind, its magnitude in base units (a date's ordinal day), and what it is measured in
    (a pint dimensionality, a currency code, a date's precision; empty for a count)."""

    kind: ValueKind
    magnitude: float
    unit: str
    written: str = field(default="", compare=False)
    """the unit as the text wrote it ("kilometer", "mile"), for a quantity: two units were converted between"""

    def same(self, other: Value) -> bool:
        """One value: of one kind, in one unit (a count of one thing, or of things one side leaves unnamed: "2,300"
        and "2,300 members"; "40 CAD" and "40 AUD" are two), equal magnitudes."""
        if self.kind == other.kind == "date" and {self.unit, other.unit} == {"day", "monthday"}:
            return _month_day(self.magnitude) == _month_day(other.magnitude)  # "18 June" is 18 June 2024's day
        units = self.unit == other.unit or (self.kind == "count" and counted_alike(self.unit, other.unit))
        converted = self.kind == "quantity" and self.dimension in _CONVERTED and self.written != other.written
        tolerance = _ROUNDED if converted and self.written and other.written else 1e-6
        return self.kind == other.kind and units and math.isclose(self.magnitude, other.magnitude, rel_tol=tolerance)

    @property
    def dimension(self) -> str:
        """What a question may ask for: "time", "mass", "length", "volume", "money", "count", "date"..."""
        if self.kind == "quantity":
            return _DIMENSIONS.get(self.unit, self.unit)
        return self.kind


def _month_day(ordinal: float) -> tuple[int, int]:
    day = datetime.date.fromordinal(int(ordinal))
    return day.month, day.day


_DIMENSIONS = {"[time]": "time", "[mass]": "mass", "[length]": "length", "[length] ** 2": "area",
               "[length] ** 3": "volume", "[temperature]": "temperature", "[length] / [time]": "speed"}


_SPOKEN = ((re.compile(r"\b(\d+(?:\.\d+)?) and a half (\w+)"), r"\1.5 \2"),
           (re.compile(r"\ba dozen\b"), "12"),
           (re.compile(r"\b(?:a |one )?half (?:an? |of an? )"), "0.5 "),
           (re.compile(r"\b(?:a |one )?quarter (?:of )?an? "), "0.25 "),
           (re.compile(r"\bthree quarters (?:of )?an? "), "0.75 "),
           (re.compile(r"^(?:an?|one) (?=[a-z])"), "1 "))
"""Spoken fractions text2num leaves alone ("half an hour", "a quarter of an hour", "an hour", "two and a half days")."""
_HEDGES = re.compile(r"^(?:about|around|approximately|approx\.?|roughly|nearly|almost|up to|at most|at least|over|"
                     r"under|some|~|c\.|ca\.)\s*", re.IGNORECASE)
_NUMBER = re.compile(r"^([-+]?\d[\d,]*(?:\.\d+)?)\s*(k|m(?=\s*(?:[a-z]+s|people)\b)|bn|thousand|million|billion)?\b\.?\s*(.*)$",
                     re.IGNORECASE)
"""A number, its magnitude word and what follows. An "m" is a million only before a plural ("2.3m users"); else it
is a metre ("5.2 m", "a 5.2m boat": g-mistral-1 read a kayak's length as 5.2 million)."""
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}
_CURRENCIES = {"€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD", "dollar": "USD",
               "dollars": "USD", "us$": "USD", "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
               "chf": "CHF", "francs": "CHF", "sek": "SEK", "kronor": "SEK", "¥": "JPY", "jpy": "JPY", "yen": "JPY"}
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\b|\b\d{4}-\d{2}(?:-\d{2})?\b",
                    re.IGNORECASE)


@cache
def _units() -> Any:
    """pint's registry, built once (about a quarter of a second): the units a person writes, with their plurals."""
    import pint

    return pint.UnitRegistry()


def _digits(text: str) -> str:
    from text_to_num import alpha2digit

    spoken = text.lower().strip()
    if not re.search(r"\d", spoken):  # with digits in, it reads "2.3 million" as "2.3 1000000"
        spoken = str(alpha2digit(spoken.replace("-", " "), "en", threshold=0))  # "two-year": 2 year
    for pattern, replacement in _SPOKEN:
        spoken = pattern.sub(replacement, spoken)
    return spoken


_CARDINAL = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
             "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety")
_SPELLED = re.compile(rf"\b(?:{_CARDINAL})(?:(?:\s+|-)(?:and\s+)?(?:{_CARDINAL}|hundred|thousand|million))*"
                      r"\b", re.IGNORECASE)
"""A number in words, starting with a cardinal ("twenty-five", "two hundred"): not a magnitude after digits ("4.2
million" is a number already)."""


def spelled_as_digits(text: str) -> str:
    """``text`` with each cardinal number written in words in digits ("needs two approving reviews": "needs 2
    approving reviews"), by ``text2num``; "one" alone stays a word ("one of the", "the one"), and so does an ordinal
    ("the second floor")."""
    from text_to_num import alpha2digit

    return _SPELLED.sub(lambda m: str(alpha2digit(m[0].replace("-", " "), "en", threshold=2)), text)


def _money(text: str) -> Value | None:
    from price_parser import Price

    text = re.split(r",\s", text, maxsplit=1)[0]  # "£1.50, over-60s £2": a list's comma; price_parser read 150
    price = Price.fromstring(text)
    if price.amount is None:
        return None
    words = {w.strip(".,").lower() for w in text.split()} | {price.currency.lower() if price.currency else ""}
    codes = {_CURRENCIES[w] for w in words if w in _CURRENCIES}
    symbol = {code for sign, code in _CURRENCIES.items() if len(sign) == 1 and sign in text}
    found = codes | symbol
    if len(found) != 1:
        return None
    scale = next((_SCALE[w] for w in words if w in _SCALE and (w != "m" or re.match(r"\D*\d[\d.,]*\s?m\b", text))),
                 1.0)
    # an "m" right after the amount is a million ("£1.08m"), not one further on ("£2.50 per m")
    return Value("money", float(price.amount) * scale, found.pop())


def _date(text: str) -> Value | None:
    """A date the text starts with: all of it ("14 August 2009"), else its longest first words that read as one
    ("1 April to 30 September inclusive": 1 April, where a season starts); without a year, a day of any year
    ("monthday"); without a digit, none."""
    if not _MONTH.search(text):
        return None
    from dateutil import parser

    words = text.split()
    for size in range(len(words), 0, -1):
        if not _MONTH.search(head := " ".join(words[:size]).rstrip(".,;:")) or not re.search(r"\d", head):
            break  # a month without a day or a year is no date: "Jan Bakker" is a person
        try:
            day = parser.parse(head, fuzzy=False, default=parser.parse("2000-01-01"))
        except (ValueError, OverflowError):
            continue
        return Value("date", float(day.date().toordinal()), "day" if _YEAR.search(head) else "monthday")
    return None


_YEAR = re.compile(r"\b\d{4}\b")


_DATA_SIZES = {"kb": "kilobyte", "mb": "megabyte", "gb": "gigabyte", "tb": "terabyte", "kib": "kibibyte",
               "mib": "mebibyte", "gib": "gibibyte"}
"""What a person means by "25 MB" (pint reads it as millibarns, an area)."""


_CLOCK = re.compile(r"^(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?m\.?|p\.?m\.?|o'clock)?(?=$|\s|[,;)\u2013-])", re.IGNORECASE)
"""A time of day the text starts with ("2:30 pm I think" is 2:30 pm, not 2 picometres)."""
_NOON = re.compile(r"^(?:12\s*)?(?:noon|midday)\b", re.IGNORECASE)


def _clock(text: str) -> Value | None:
    """A time of day: "5 pm", "17:00", "2:30pm", "5 o'clock", "12 noon", the first of "10am-4pm"; a bare number is
    none (it is a count)."""
    if _NOON.match(text.strip()):
        return Value("clock", 720.0, "")
    found = _CLOCK.match(text.strip())
    if found is None or (found[2] is None and found[3] is None) or ("." in text and found[3] is None):
        return None  # a bare number, or "12.30" with no am/pm: a price as likely as a time
    hour, minute, suffix = int(found[1]), int(found[2] or 0), (found[3] or "").lower().replace(".", "")
    if suffix == "pm" and hour < 12:
        hour += 12
    elif suffix == "am" and hour == 12:
        hour = 0
    return Value("clock", float(hour * 60 + minute), "") if hour < 24 and minute < 60 else None


def _quantity(number: float, rest: str) -> Value:
    """A number and the words after it: a unit pint knows (its first one or two words, or the second after a word
    like "remote" or "gross": "3 remote days", "2,140 gross tonnes"), as written ("GHz") or in small letters
    ("Minutes"), else a count of things."""
    if re.match(r"(?:%|per ?cent\b)", rest, re.IGNORECASE):  # pint makes it a dimensionless 0.31, a count's kin
        return Value("quantity", number, "percent")
    words = [_DATA_SIZES.get(w.lower(), w).strip(".,;:*_") for w in rest.split()]
    if words and (words[0].lower() in _NOT_UNITS or re.fullmatch(r"[ap]\.?m\.?", words[0], re.IGNORECASE)):
        words = []  # "5 to 7", "3 in total": "in" is no inch; "10 am-4" (a range of times): "am" is no attometre
    elif len(words) > 1 and words[1].lower() in _NOT_UNITS:
        words = words[:1]  # "5 nights in a row"
    lower = [w.lower() for w in words]
    for unit in dict.fromkeys(" ".join(u) for ws in (words, lower) for u in (ws[:2], ws[:1], ws[1:2]) if u):
        if (value := _unit_value(number, unit)) is not None:
            return value
    return Value("count", number, _thing(lower))


def _thing(words: list[str]) -> str:
    """What a count counts, singular: its words up to the first of its two that is a plural ("5 consecutive nights":
    consecutive night, "8 speed settings": speed setting, "2,300 members": member), else its first word; nothing for
    no word."""
    named = [m[0] for w in words[:2] if (m := re.match(r"[a-z]+", w))]
    if not named:
        return ""
    plural = next((i for i, w in enumerate(named) if w.endswith("s") and not w.endswith("ss")), None)
    if plural is None:
        return named[0]
    return " ".join([*named[:plural], named[plural].removesuffix("s")])


def counted_alike(a: str, b: str) -> bool:
    """Two counts' things are one: the same words, one side naming none ("2,300" and "2,300 members"), or one's words
    among the other's ("8 speeds" and "8 speed settings", g-mistral-2; "5 nights" and "5 consecutive nights")."""
    if not (a and b) or a == b:
        return True
    x, y = set(a.split()), set(b.split())
    return x <= y or y <= x


def _unit_value(number: float, unit: str) -> Value | None:
    """``number`` of ``unit`` in base units, if pint knows the unit and it has an everyday dimension (``_EVERYDAY``) or
    a unit of its own (bytes)."""
    import tokenize

    import pint

    try:
        written = _units().Quantity(number, unit)
        base = written.to_base_units()
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, AssertionError, tokenize.TokenError):
        return None  # pint's parser tokenizes the words as Python: an unclosed "(" is a TokenError
    dimension = str(base.dimensionality)
    if dimension in _EVERYDAY:
        return Value("quantity", float(base.magnitude), dimension, str(written.units))
    if str(base.units) == "bit":  # bytes: pint gives them no dimension (nor "MAU", monthly active users, a unit)
        return Value("quantity", float(base.magnitude), "bit")
    return None


_EVERYDAY = frozenset({"[time]", "[length]", "[mass]", "[temperature]", "[length] ** 2", "[length] ** 3",
                       "[length] / [time]", "1 / [time]", "[mass] * [length] ** 2 / [time] ** 3",
                       "[mass] * [length] ** 2 / [time] ** 2", "[mass] / [length] / [time] ** 2"})
"""The dimensions people's documents state amounts in: time, length, mass, temperature, area, volume, speed,
frequency, power, energy and pressure. pint knows far more units, and reads words and initials as them ("2 ponds" a
force, "2 St" a viscosity, "22 H" an inductance, "2,140 GT" a magnetic field): an amount of another dimension is
read as a count of the words after it instead."""
_NOT_UNITS = frozenset({"to", "and", "or", "of", "in", "at", "a", "an", "the", "per", "each", "for", "from", "by",
                        "with", "about", "around", "total", "most", "least", "more", "less", "than", "are", "as", "is",
                        "was", "were", "be", "has", "have", "had", "it", "its", "this", "that", "on", "so", "but",
                        "if", "not", "no", "we", "you", "they", "will", "can", "may", "all", "up"})
"""Words after a number that name no thing counted ("5 to 7", "3 in total"), among them the small words pint reads as
units: "5 nights are" is no area (an are is 100 m²), "3 minutes, as" no attoseconds."""


_TRAILING = re.compile(r"(?:\s+(?:" + "|".join(sorted(_NOT_UNITS)) + r"))+\s*$", re.IGNORECASE)
"""Connecting words a span cut from a sentence may end on ("built 1847 to designs", "from 1 April to"): no part of
the value, and dateutil refuses a date that keeps them."""


_MARKUP = re.compile(r"[*`]+")
"""Markdown's emphasis and code marks, part of no value: read with them, "**8:40 am**. Children" was 8 attometres."""


GLUED_UNIT = re.compile(r"(?<=\d)(?=(?!(?:st|nd|rd|th)\b)[a-zA-Z\u00b0\u00b5])")
"""Where a unit is written onto its number ("11am", "25MB", "5km", "16.1km"): read as if a space stood there, or the
number is read alone as a count ("2.5kg" a count of 2, the number stopped at its decimal point). Not an ordinal's
ending ("2nd"). Answers (``read_value``) and passages' sentences (``dissent``) are parted alike."""


def read_value(answer: str) -> Value | None:
    """The value an answer names, or None when it names none (a name, a place, an adjective). Only an answer that
    starts with its value counts ("2,300 members", "about 40 euros"); a sentence with a number inside is not one."""
    text = _TRAILING.sub("", _HEDGES.sub("", _MARKUP.sub("", answer).strip()))
    if not text or len(text) > 60:
        return None
    if (date := _date(text)) is not None:
        return date
    if (clock := _clock(text)) is not None:
        return clock
    digits = _digits(GLUED_UNIT.sub(" ", text))
    if (money := _money(digits)) is not None:
        return money
    found = _NUMBER.match(digits)
    if found is None:
        return None
    if re.match(r"(?:to|-|\u2013|or|and)\s*\d", found[3]):
        return None  # a range or a choice ("5 to 7 days"), not one value
    number = float(found[1].replace(",", "")) * _SCALE.get((found[2] or "").lower(), 1.0)
    if found[2] is None and re.fullmatch(r"1[5-9]\d\d|20\d\d", found[1]) and not found[3]:
        return Value("date", float(int(found[1])), "year")
    as_written = _NUMBER.match(text)  # pint's units keep their case: "GHz", not "ghz"
    return _quantity(number, as_written[3] if as_written and as_written[1] == found[1] else found[3])


def same_value(a: str, b: str) -> bool:
    """Two answers name one value (each read by ``read_value``)."""
    x, y = read_value(a), read_value(b)
    return x is not None and y is not None and x.same(y)


_ASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern, re.IGNORECASE), dimension) for pattern,
                                                       dimension in (
    ((r"\bhow (?:long|many (?:seconds|minutes|hours|days|weeks|months|years))\b|\b(?:duration|notice period|"
     r"response time|turnaround|waiting time|retention period|lead time)\b"), "time"),
    (r"\bhow (?:much|many) (?:\w+ )?(?:does|do|did|will|would|is|are|was)\b.*\b(?:cost|pay|charge|earn)", "money"),
    ((r"\b(?:price|cost|fee|fees|fare|charge|allowance|budget|salary|deposit|rent|refund|stipend|reimburs\w*)\b"
     r"|\bhow much (?:money|does it cost)\b"), "money"),
    (r"\bhow heavy\b|\bweigh(?:t|s)?\b", "mass"),
    (r"\bcapacity\b|\bhow many (?:litres|liters|gallons|millilitres)\b|\bvolume\b", "volume"),
    (r"\bhow (?:tall|high|far|wide|deep)\b|\b(?:length|distance|height|width|depth)\b", "length"),
    (r"\bhow many\b|\bnumber of\b", "count"),
))
"""What amount a question asks for, by its words, first match wins: "What is the cancellation fee" asks for money,
"How long is the notice period" for a duration (asked first: "how long does it take to charge" is a duration), "How
many seats" for a count."""


def asked_dimension(question: str) -> str | None:
    """The kind of amount the question asks for ("money", "time", "mass", "volume", "length", "count"), or None
    when it asks for no amount (a name, a place, a date, a yes or no)."""
    return next((dimension for pattern, dimension in _ASKS if pattern.search(question)), None)


_VERBS = r"(?!(?:is|was|does|did|has|do|are|were|opening|hours)\b)"
_SEVERAL = re.compile(r"^\W*(?:(?:who|what|which)\s+(?:are|were)\s+(?:the\s+)?|(?:what|which)\s+)"
                      + _VERBS + r"(?:[a-z-]+\s+)?" + _VERBS + r"[a-z-]*[^\W\d_suia]s\s+"
                      r"(?:can|could|do|does|did|are|were|is|will|should|must|have|has|in|at|on|of|for|to|\?)",
                      re.IGNORECASE)
"""A question asking for several things by a plural noun: "Who are the headliners ...?", "What formats can I
export ... to?", "Which languages is the app available in?". Not "What warranty comes with ...?" (a verb ends in -s
too), "What bonus is ...?" or "What basis is ...?" (nor do -ss, -us, -is or -as words), nor "What are the opening
hours?" (one timetable)."""


def asks_for_several(question: str) -> bool:
    """Whether the question asks for a list (``_SEVERAL``): passages naming different members of it complement
    each other, and one answer taken from the first of them leaves the rest out (e-gullhaven-festival-1: each
    night's headliner announced in its own newsletter)."""
    return bool(_SEVERAL.search(question))


_RANGE = re.compile(r"^[\d.,]+\s*(?:to|-|\u2013|or|and)\s*(?=\d)")


def fits(answer: str, dimension: str) -> bool:
    """Whether an answer can answer a question asking for an amount of ``dimension``: it must name a value of that
    kind. A count also fits a money question (a bare "40" under a price heading) and a duration ("3" days); a money
    amount fits a count question ("how many euros")."""
    value = read_value(answer) or read_value(_RANGE.sub("", _HEDGES.sub("", answer.strip()), count=1))
    if value is None:  # a range ("3 to 5 working days") is typed by its end
        return False
    if value.dimension == dimension:
        return True
    loose = {"money": {"count"}, "time": {"count", "length"}, "count": {"money", "time", "mass", "volume", "length"},
             "mass": {"count"}, "volume": {"count"}, "length": {"count", "time"}}  # "how long": a duration or a length
    return value.dimension in loose.get(dimension, set())
