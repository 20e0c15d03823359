"""Rule ``asked-band``: the answer read from the row whose weight, length, age or age group holds the question's.

Price lists and fee tables state one value per band: "| Large | 25-40 kg | £55 |", "Senior (65+)", "| U9 - U12 |
£20 |". A question names a point, not the band ("for a 30 kg labrador", "a 78-year-old", "in the Under 10s"), so
neither the model nor ``asked-scope``'s named members can tell which row is asked for, and the 1.5B model answers
with the row above (h-brackley-juniors-1: "£15" of the U7 - U8 row) or with the value of a page off the question's
topic (h-pelton-dog-grooming-1: a mobile groomer's "£48" for a medium dog, cited to the salon's FAQ). When the cited
passages (else, when they do not state it, the passages on topic) state the answer's value only in sentences whose
bands all leave the question's point out, or none does, it is read again from the sentences whose band holds it:
the value most passages state there, the cited ones first on a tie. With none, the answer stands: a band the
documents do not state is no reason to say they do not answer.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import NamedTuple

from tanglerag.methods.ledger.dissent import answer_value, names, sentence_values
from tanglerag.methods.ledger.scoped import Scoped, marked, most_stated, sentence_contexts
from tanglerag.methods.ledger.values import Value
from tanglerag.text import strip_citations
from tanglerag.types import RetrievedPassage


class Band(NamedTuple):
    """What a band measures ("mass" in kg, "length" in m, "age" in years, "group": a team's under-N number) and its
    ends, both included (a point is a band of one)."""

    measure: str
    low: float
    high: float

    def holds(self, point: Band) -> bool:
        return self.measure == point.measure and self.low <= point.low and point.high <= self.high


_UNITS = {"kg": ("mass", 1.0), "kgs": ("mass", 1.0), "kilo": ("mass", 1.0), "kilogram": ("mass", 1.0),
          "g": ("mass", 0.001), "gram": ("mass", 0.001), "lb": ("mass", 0.4536), "pound": ("mass", 0.4536),
          "stone": ("mass", 6.35), "m": ("length", 1.0), "metre": ("length", 1.0), "meter": ("length", 1.0),
          "cm": ("length", 0.01), "ft": ("length", 0.3048), "foot": ("length", 0.3048), "feet": ("length", 0.3048)}
"""Units of the bands read, to kilograms and metres. Not "st" (a street, a saint far more often than a stone)."""
_NUMBER = r"(?<![\d.,\u00a3$\u20ac])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
"""A number not inside another ("1,500", not its "500") nor an amount's ("£1.5m" is money, not 1.5 metres)."""
_UNIT = r"(kgs?|kilos?|kilograms?|g|grams?|lbs?|pounds?|stone|m|metres?|meters?|cm|ft|foot|feet)\b"
_DASH = r"\s*(?:-|\u2010|\u2012|\u2013|\u2014|\u2212|to)\s*"
_Shapes = tuple[tuple[re.Pattern[str], str], ...]
_BANDS: _Shapes = tuple((re.compile(pattern, re.IGNORECASE), shape) for pattern, shape in (
    (_NUMBER + r"\s*(?:" + _UNIT + r")?" + _DASH + _NUMBER + r"\s*" + _UNIT, "range"),  # "10-25 kg", "500 g - 2 kg"
    (r"\b(?:up to|under|below|less than|max(?:imum)?)\s+" + _NUMBER + r"\s*" + _UNIT, "upto"),
    (r"\b(?:over|above|more than)\s+" + _NUMBER + r"\s*" + _UNIT, "over"),
    (_NUMBER + r"\s*" + _UNIT + r"\s*(?:\+|and over|or more|and above)", "over"),
))
_AGES: _Shapes = tuple((re.compile(pattern, re.IGNORECASE), shape) for pattern, shape in (
    (r"\baged?\s+(\d{1,3})" + _DASH + r"(\d{1,3})\b", "range"),
    (r"\b(\d{1,3})" + _DASH + r"(\d{1,3})[- ]years?[- ]olds?\b", "range"),
    (r"\(\s*(\d{1,3})\s*\+\s*\)|\baged?\s+(\d{1,3})\s*\+|\bover[- ](\d{1,3})s\b", "over"),
    (r"\b(?:under[- ](\d{1,2})s\b)", "under"),
))
"""Ages a band names: "aged 5-11", "5-11-year-olds", "(65+)", "aged 65+", "over-65s", "under 5s". Not "10 and over",
which counts anything ("groups of 10 and over")."""
_GROUPS: _Shapes = tuple((re.compile(pattern), shape) for pattern, shape in (
    (r"\b(?:U|Under )(\d{1,2})s?" + _DASH + r"(?:U|Under )(\d{1,2})s?\b", "range"),  # "U9 - U12", "Under 7 to Under 16"
    (r"\b(?:U|Under )(\d{1,2})s?\s+and\s+under\b", "upto"),
    (r"\b(?:U|Under )(\d{1,2})s?\b", "point"),
))
_POINT_AGE = re.compile(r"(?<![-\u2013\d])\b(\d{1,3})[- ]years?[- ]old\b|"
                        r"\baged\s+(\d{1,3})\b(?!\s*(?:[-\u2013+]|to\b))", re.IGNORECASE)
_POINT_MEASURE = re.compile(_NUMBER + r"\s*" + _UNIT, re.IGNORECASE)


def bands(text: str) -> set[Band]:
    """Every band ``text`` states: weights and lengths with their units, ages ("65+", "over-65s", "aged 5-11", "under
    5s") and age groups ("U9 - U12", "U8 and under", "Under 10s")."""
    return {band for band, _ in placed_bands(text)}


def placed_bands(text: str) -> list[tuple[Band, tuple[int, int]]]:
    """``bands`` with where each is written in ``text``, in the text's order."""
    found: list[tuple[Band, tuple[int, int]]] = []

    def add(band: Band, match: re.Match[str]) -> None:
        if band.low <= band.high and not any(a <= match.start() < b for _, (a, b) in found):
            found.append((band, match.span()))  # a range's ends are no bands of their own

    for pattern, shape in _GROUPS:  # first: "Under 10s" is a team, not the under-fives' "under 5s"
        for m in pattern.finditer(text):
            numbers = [float(g) for g in m.groups() if g]
            add(Band("group", numbers[0], numbers[-1]) if shape != "upto" else Band("group", 0.0, numbers[0]), m)
    for pattern, shape in _BANDS:
        for m in pattern.finditer(text):
            if shape == "range":
                add(Band(_measure(m[3] or m[6]), _number(m[1], m[2], m[3] or m[6]), _number(m[4], m[5], m[6])), m)
            else:
                number = _number(m[1], m[2], m[3])
                add(Band(_measure(m[3]), 0.0, number) if shape == "upto" else Band(_measure(m[3]), number, math.inf),
                    m)
    for pattern, shape in _AGES:
        for m in pattern.finditer(text):
            numbers = [float(g) for g in m.groups() if g]
            add(Band("age", numbers[0], numbers[1]) if shape == "range" else
                Band("age", numbers[0], math.inf) if shape == "over" else Band("age", 0.0, numbers[0] - 1), m)
    return sorted(found, key=lambda item: item[1])


def _unit(unit: str) -> tuple[str, float]:
    unit = unit.lower()
    return _UNITS.get(unit) or _UNITS[unit.removesuffix("s")]


def _measure(unit: str) -> str:
    return _unit(unit)[0]


def _number(whole: str, fraction: str | None, unit: str) -> float:
    """A number read with its unit, in the unit's base (kilograms, metres)."""
    return float(whole.replace(",", "") + (f".{fraction}" if fraction else "")) * _unit(unit)[1]


def asked_point(question: str) -> Band | None:
    """The weight, length, age or age group a question names ("a 30 kg labrador", "a 78-year-old", "the Under 10s"),
    if it names one and no band."""
    named = bands(question)
    points = [b for b in named if b.low == b.high]
    if named:
        return points[0] if len(named) == 1 and points else None
    if (age := _POINT_AGE.search(question)) is not None:
        years = float(age[1] or age[2])
        return Band("age", years, years)
    if (measure := _POINT_MEASURE.search(question)) is not None:
        value = _number(measure[1], measure[2], measure[3])
        return Band(_measure(measure[3]), value, value)
    return None


def asked_band(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str,
               relevant: set[str]) -> Scoped:
    """The answer with its value read from the sentences whose band holds the question's point (module docstring);
    the answer as it is when the question names no point, a cited sentence stating the value holds it or names no
    band, or no sentence holding it states a value of the answer's kind."""
    point = asked_point(question)
    first, newline, rest = answer.partition("\n")
    said = answer_value(first)
    if point is None or said is None:
        return Scoped(answer, cited)
    numbered = list(enumerate(passages, 1))
    stating = _stating(said, [h for h in passages if h.passage.id in cited]) or \
        _stating(said, [h for h in passages if h.passage.id in relevant])  # the model cites a chunk beside its value's
    of_measure = [[b for b in _bands_of(said, context, own) if b.measure == point.measure] for context, own in stating]
    if any(not found or any(b.holds(point) for b in found) for found in of_measure):
        return Scoped(answer, cited)
    cited_first = sorted(numbered, key=lambda item: item[1].passage.id not in cited)
    found = most_stated((n, value, span) for n, hit in cited_first for context, own in sentence_contexts(hit)
                        for value, span in _in_band(point, said, context, own))
    if found is None:
        return Scoped(answer, cited)
    why = (f"asked-band: {strip_citations(first)} is stated for another band than the question's"
           if stating else f"asked-band: no passage on topic states {strip_citations(first)}")
    return marked(*found, passages, newline + rest, f"{why}; the passages state {found[0]} for it")


def _bands_of(said: Value, context: str, own: str) -> set[Band]:
    """The bands a sentence states ``said`` for (``_paired``); its label's, heading's or title's when it names none."""
    placed = placed_bands(own)
    if not placed:
        return bands(context)
    return {band for value, _, band in _paired(own, placed) if value.same(said) and band is not None}


def _paired(own: str, placed: list[tuple[Band, tuple[int, int]]]) -> list[tuple[Value, str, Band | None]]:
    """Each value of a sentence with the band it is stated for: the band in its part of the sentence (parts end at a
    comma or semicolon: "£15 for U7 - U8, £20 for U9 - U12"), the last one before it where the part names several,
    else the first after it; None when its part names none ("adult £3, under-19s £1.50": £3 is no band's)."""
    cuts = [0, *(m.end() for m in _PART.finditer(own)), len(own) + 1]
    out, at = [], 0
    for value, span in sentence_values(own, True):
        found = re.compile(r"(?<![\d.,])" + re.escape(span) + r"(?!\d)").search(own, at)
        start = found.start() if found is not None else at
        at = found.end() if found is not None else at
        part = next((a, b) for a, b in itertools.pairwise(cuts) if a <= start < b)
        near = [(band, where) for band, where in placed if part[0] <= where[0] < part[1]]
        before = [band for band, (_, end) in near if end <= start]
        after = [band for band, (begin, _) in near if begin >= start]
        out.append((value, span, before[-1] if before else after[0] if after else None))
    return out


_PART = re.compile(r"[,;]\s")


def _stating(said: Value, hits: list[RetrievedPassage]) -> list[tuple[str, str]]:
    """The sentences of ``hits`` stating ``said``, each with its context (title, heading, label)."""
    return [(context, own) for hit in hits for context, own in sentence_contexts(hit) if names(own, said)]


def _in_band(point: Band, said: Value, context: str, own: str) -> list[tuple[Value, str]]:
    """The values of the answer's kind a sentence states for a band holding the point (``_paired``: "adult £3,
    under-19s £1.50" gives £1.50 for a 17-year-old), or its first when it names no band and its label, heading or
    title does ("Young person (aged 5-21)" above "£2.00")."""
    placed = placed_bands(own)
    if not placed:
        first = [(v, span) for v, span in sentence_values(own, True) if v.dimension == said.dimension][:1]
        return first if any(b.holds(point) for b in bands(context)) else []
    return [(value, span) for value, span, band in _paired(own, placed)
            if value.dimension == said.dimension and band is not None and band.holds(point)]
