"""Rule ``asked-scope``: the answer's value read for the day or season the question asks about.

A page of opening hours or car-park limits states one value per day or season, and the 1.5B model often answers
with the row above the one asked for ("7 pm" for a Saturday from the "Monday - Friday" row). Days and seasons are
closed sets, so a sentence naming another member of the set than the one asked, and not the asked one, is about
another scope: the value is then read from the cited passages' sentences that do name the asked member.
"""

from __future__ import annotations

import re
from collections import Counter

from tanglerag.methods.ledger.dissent import answer_value, is_label, sentence_values, split_sentences
from tanglerag.methods.ledger.values import Value
from tanglerag.text import normalize_answer, strip_citations
from tanglerag.types import RetrievedPassage

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
SCOPES: tuple[dict[str, frozenset[str]], ...] = (
    {**{day: frozenset({day}) for day in (*_WEEKDAYS, "saturday", "sunday")},
     "weekday": frozenset(_WEEKDAYS), "weekend": frozenset({"saturday", "sunday"})},
    {season: frozenset({season}) for season in ("spring", "summer", "autumn", "winter")},
)
"""The closed sets of scopes, each word with the members it covers ("weekend": Saturday and Sunday)."""


def _covered(text: str, scope: dict[str, frozenset[str]]) -> frozenset[str]:
    """The members of ``scope`` that ``text`` names, a plural as its singular ("Saturdays", "weekdays")."""
    words = {re.sub(r"s$", "", w) for w in normalize_answer(text).split()}
    return frozenset().union(*(members for word, members in scope.items() if word in words))


def _contexts(hit: RetrievedPassage) -> list[str]:
    """Each sentence of the passage with the short label line it sits under (a table's "Saturday" cell)."""
    sentences = [s.strip() for s in split_sentences(hit.passage.text)]
    return [f"{sentences[n - 1]} {s}" if n and is_label(sentences[n - 1]) else s for n, s in enumerate(sentences)]


def asked_scope(answer: str, cited: list[str], passages: list[RetrievedPassage],
                question: str) -> tuple[str, list[str], str]:
    """The answer with its value read for the asked day or season, its citations and the rule's words ("", the
    answer and citations as they are,
    when the question names none, the value's sentence names the asked one or no other, or no cited sentence naming
    the asked one states a value of its kind). Of several, the value most cited passages state there; its passages'
    marks replace the answer's (e-norrvik-parking-1: "3 hours" of the summer row becomes "6 hours" of winter's)."""
    first, newline, rest = answer.partition("\n")
    said = answer_value(first)
    if said is None:
        return answer, cited, ""
    hits = [(n, h) for n, h in enumerate(passages, 1) if h.passage.id in cited]
    for scope in SCOPES:
        asked = _covered(question, scope)
        stating = [c for _, h in hits for c in _contexts(h) if any(v.same(said) for v, _ in sentence_values(c, False))]
        named = [_covered(c, scope) for c in stating]
        if not asked or not stating or not all(members and not members & asked for members in named):
            continue
        found = _values_for(asked, scope, said, hits)
        if found:
            (span, marks), _ = Counter(found).most_common(1)[0]
            fixed = f"{span} [{', '.join(map(str, sorted(marks)))}]"
            why = f"asked-scope: {strip_citations(first)} is stated for another {'day' if scope is SCOPES[0] else 'season'}"
            return (fixed + newline + rest, [passages[m - 1].passage.id for m in sorted(marks)],
                    f"{why} than asked; the cited passages state {span} for it")
    return answer, cited, ""


def _values_for(asked: frozenset[str], scope: dict[str, frozenset[str]], said: Value,
                hits: list[tuple[int, RetrievedPassage]]) -> list[tuple[str, frozenset[int]]]:
    """Each value of the answer's kind the cited passages state in a sentence naming the asked scope, as (its words,
    the marks of every cited passage stating it there), once per passage."""
    stated: dict[str, tuple[Value, set[int]]] = {}
    for n, hit in hits:
        for context in _contexts(hit):
            if _covered(context, scope) & asked:
                for value, span in sentence_values(context, True):
                    if value.dimension != said.dimension:
                        continue
                    key = next((k for k, (v, _) in stated.items() if v.same(value)), span)
                    stated.setdefault(key, (value, set()))[1].add(n)
    return [(span, frozenset(marks)) for span, (_, marks) in stated.items() for _ in marks]
