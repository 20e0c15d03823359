"""Rule ``asked-scope``: the answer read for the day, season, ticket, plan or year the question asks about.

A page of opening hours, car-park limits, fares or plans states one value per day, season, ticket class or plan
tier, and the 1.5B model often answers with the row above the one asked for ("7 pm" for a Saturday from the "Monday -
Friday" row). These are closed sets, and two years are as plainly two scopes, so a sentence naming another member
than the one asked, and not the asked one (read with its passage's title: "Gullhaven 2024: our first headliner!"),
is about another scope: the value is then read from the sentences that do name the asked member, and where none
states one the documents do not say (the abstention a similar entity's value would otherwise fill). An answer that is
a name, not a value, can only be withdrawn so: no other name is read from a sentence without the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from tanglerag.methods.ledger.dissent import answer_value, is_label, names, sentence_values, split_sentences
from tanglerag.methods.ledger.values import Value
from tanglerag.provenance import section_of
from tanglerag.text import normalize_answer, strip_citations
from tanglerag.types import RetrievedPassage

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|"
          r"apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?")
_DATED_DAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+(?:(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?"
                        r"(?:\s+of)?\s+" + _MONTH + r"|" + _MONTH + r"\s+\d{1,2}\b)", re.IGNORECASE)
"""A weekday that is part of a date ("changes from Sunday 26 January 2025", "posted Tuesday, March 4"): the day
something happened, not the day a value is for. In a notice's title it made every sentence under it about Sundays, so
the weekday timetable's last bus answered for the first Sunday one (f-greyling-buses-2). Taken out of what a passage's
sentences are about, not of the question ("the last bus on Sunday 2 February" asks about that Sunday)."""


@dataclass(frozen=True)
class Scope:
    """A closed set of scopes: what one is called in the rule's words, each word with the members it covers
    ("weekend": Saturday and Sunday), and whether only a capitalised word names one ("the Gold plan", not "gold")."""

    name: str
    words: dict[str, frozenset[str]]
    capitalised: bool = False

    def covered(self, text: str) -> frozenset[str]:
        """The members ``text`` names, a plural as its singular ("Saturdays", "weekdays")."""
        if self.capitalised:
            text = " ".join(re.findall(r"\b[A-Z][a-z]+\b", text))
        words = {re.sub(r"s$", "", w) for w in normalize_answer(text).split()}
        return frozenset().union(*(members for word, members in self.words.items() if word in words))


class Years(Scope):
    """The years: an open set, but two years are as decidably two scopes as two days ("the 2025 line-up" is not
    2024's)."""

    def covered(self, text: str) -> frozenset[str]:
        return frozenset(_YEAR.findall(text))


_YEAR = re.compile(r"(?<![\d,.])(?:19|20)\d\d(?![\d,.]\d)")


def _each(*words: str) -> dict[str, frozenset[str]]:
    return {word: frozenset({word}) for word in words}


SCOPES: tuple[Scope, ...] = (
    Scope("day", {**_each(*_WEEKDAYS, "saturday", "sunday"), "weekday": frozenset(_WEEKDAYS),
                  "weekend": frozenset({"saturday", "sunday"})}),
    Scope("season", _each("spring", "summer", "autumn", "winter")),
    Scope("ticket", _each("adult", "child", "senior", "student", "concession", "infant")),
    Scope("vehicle", {**_each("car", "van", "motorhome", "caravan", "motorcycle", "bicycle", "lorry", "trailer"),
                      "campervan": frozenset({"motorhome"}), "camper": frozenset({"motorhome"}),
                      "motorbike": frozenset({"motorcycle"}), "bike": frozenset({"bicycle"}),
                      "lorrie": frozenset({"lorry"}), "hgv": frozenset({"lorry"})}),
    Scope("plan", _each("free", "basic", "starter", "standard", "plus", "pro", "premium", "team", "business",
                        "enterprise", "bronze", "silver", "gold", "platinum"), capitalised=True),
    Years("year", {}),
)
"""The sets of scopes a page states one value each of: days, seasons, ticket classes, vehicle classes (a toll, fare or
parking page: a motorhome's toll is not the car's, f-yarrowfield-ferry-3), plan tiers and years."""


_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LEADER = re.compile(r"(?:\.\s?){2,}$|\u2026$")
"""A row's dotted leader ("Car or small van (up to 5 m) .... £6.50"): the sentence splitter ends a sentence at its
dots, and the value after them is that row's."""


def sentence_contexts(hit: RetrievedPassage) -> list[tuple[str, str]]:
    """Each sentence of the passage after its title, the heading it sits under and the short label line or the dotted
    row before it (a table's "Saturday" cell, a toll schedule's "Car ...."): what a sentence is about includes what its page and its section are about (the "22:40"
    bullet under "What's changing (Monday to Friday)" is a weekday time, f-greyling-buses-2). The heading is the last
    Markdown heading above the sentence in the passage, else the innermost of the chunk's section path below the
    title; weekdays that are part of a date are taken out (``_DATED_DAY``). Each comes with the sentence alone, where
    its values are read: a title's value ("Car toll to rise to £7.80") is no value of the sentences under it
    (f-yarrowfield-ferry-3: "Motorhome charges will still be quoted at the kiosk" states none)."""
    text = hit.passage.text
    sentences = [s.strip() for s in split_sentences(text)]
    title = f"{hit.passage.title}: " if hit.passage.title else ""
    headings = [(m.start(), m.group(1)) for m in _HEADING.finditer(text)]
    path = section_of(hit.passage.metadata) or []
    opening = path[-1] if len(path) > 1 else ""  # a one-heading path is the title's
    out, at = [], 0
    for n, sentence in enumerate(sentences):
        found = text.find(sentence, at)
        at = found if found >= 0 else at
        heading = next((h for start, h in reversed(headings) if start <= at), opening)
        head = f"{heading}: " if heading and heading not in sentence else ""
        labelled = n and (is_label(sentences[n - 1]) or _LEADER.search(sentences[n - 1]))
        context = title + head + (f"{sentences[n - 1]} {sentence}" if labelled else sentence)
        out.append((_DATED_DAY.sub(" ", context), sentence))
    return out


def _members(scope: Scope, context: str, own: str) -> frozenset[str]:
    """The members a sentence is about: those it names itself, else those of its label, heading and title. "The car
    toll rises to £7.00" under a heading naming motorhomes is about cars (f-yarrowfield-ferry-3)."""
    return scope.covered(_DATED_DAY.sub(" ", own)) or scope.covered(context)


class Scoped(NamedTuple):
    """What ``asked_scope`` made of an answer: its text and citations, the rule's words ("" when it did nothing),
    and whether the documents state no value for the asked scope (then the answer is unknown)."""

    text: str
    cited: list[str]
    why: str = ""
    unknown: bool = False


def asked_scope(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str) -> Scoped:
    """The answer with its value read for the asked day, season, ticket, plan or year. Nothing is done when the question
    names none, or the value's sentences name the asked one or no other. Otherwise the value is the one most cited
    passages state in a sentence naming the asked one, else most other shown passages, their marks replacing the
    answer's (e-norrvik-parking-1: "3 hours" of the summer row becomes "6 hours" of winter's); with none, the
    documents do not say (a Gold plan's excess where only Silver's is stated)."""
    first, newline, rest = answer.partition("\n")
    said, words = answer_value(first), f" {normalize_answer(strip_citations(first))} "
    numbered = list(enumerate(passages, 1))
    hits = [(n, h) for n, h in numbered if h.passage.id in cited]
    stating = [(c, own) for _, h in hits for c, own in sentence_contexts(h)
               if (names(own, said) if said is not None else words.strip() and words in f" {normalize_answer(own)} ")]
    for scope in SCOPES:
        asked = scope.covered(question)
        named = [_members(scope, c, own) for c, own in stating]
        if not asked or not stating or not all(members and not members & asked for members in named):
            continue
        why = f"asked-scope: {strip_citations(first)} is stated for another {scope.name} than asked"
        if said is None:  # a name or a place: no other can be read from a sentence without the model
            return Scoped(answer, cited, f"{why}, and no other is read for it", unknown=True)
        found = most_stated(_values_for(asked, scope, said, hits)) or \
            most_stated(_values_for(asked, scope, said, [(n, h) for n, h in numbered if h.passage.id not in cited]))
        if found is None:
            return Scoped(answer, cited, f"{why}, and no passage states one for it", unknown=True)
        return marked(*found, passages, newline + rest, f"{why}; the passages state {found[0]} for it")
    return Scoped(answer, cited)


def most_stated(stated: Iterable[tuple[int, Value, str]]) -> tuple[str, list[int]] | None:
    """Of the values stated (each with the mark of the passage stating it and its words), the one most passages
    state, one value however it is written, the first of those on a tie: its words and its passages' marks."""
    tally: dict[str, tuple[Value, set[int]]] = {}
    for n, value, span in stated:
        key = next((k for k, (v, _) in tally.items() if v.same(value)), span)
        tally.setdefault(key, (value, set()))[1].add(n)
    if not tally:
        return None
    span, (_, marks) = max(tally.items(), key=lambda item: len(item[1][1]))
    return span, sorted(marks)


def marked(span: str, marks: list[int], passages: list[RetrievedPassage], rest: str, why: str) -> Scoped:
    """The answer written as ``span`` with the marks of the passages stating it (``rest``: the lines after the answer
    line), citing those passages."""
    return Scoped(f"{span} [{', '.join(map(str, marks))}]" + rest, [passages[m - 1].passage.id for m in marks], why)


def _values_for(asked: frozenset[str], scope: Scope, said: Value,
                hits: list[tuple[int, RetrievedPassage]]) -> list[tuple[int, Value, str]]:
    """Each value of the answer's kind the passages ``hits`` state in a sentence naming the asked scope, with the mark
    of the passage stating it there and its words."""
    return [(n, value, span) for n, hit in hits for context, own in sentence_contexts(hit)
            if _members(scope, context, own) & asked
            for value, span in sentence_values(own, True) if value.dimension == said.dimension]
