"""From claims to sides, and sides to the things they are about.

A side is one answer: claims whose normalised answers are equal, or one of which contains the other as whole words
("1963" and "17 February 1963"), are one side, shown by its most specific wording. Only grounded claims make sides: a
claim whose passage holds neither its quote nor its answer's words is the model's misreading, not a source's claim
(the ledger keeps it, marked). A side's witnesses are the independent sources that state its answer: its claims'
passages and every other passage whose text holds its most specific wording, words in order (the model reads one
claim a passage, so a passage that also names the answer corroborates it; a planted answer is mostly found in its one
edited passage only: on RAMDocs dev this lowers the leak from 36.1% to 27.9%, docs/results/conflicts.md). Two sides are about the same thing, so their
answers conflict, when a claim of each comes from one document (versions of it) or, unless ``ledger.same_thing`` is
``versions``, their claims' ``about`` match; otherwise they answer for different things and are complementary.
"""

from __future__ import annotations

from collections import Counter

from rapidfuzz import fuzz

from tanglerag.conflicts import Claim, Side, quote_in_passage
from tanglerag.methods.ledger.independence import Independence, components
from tanglerag.text import normalize_answer


def same_answer(a: str, b: str) -> bool:
    x, y = normalize_answer(a), normalize_answer(b)
    return bool(x) and bool(y) and (x == y or f" {x} " in f" {y} " or f" {y} " in f" {x} ")


def build_sides(claims: list[Claim], independence: Independence, texts: dict[str, str]) -> list[Side]:
    """One side per answer the grounded claims give, in the order the passages came; the most witnessed first.
    ``texts``: every passage's text by id, for the passages that corroborate an answer they were not read for."""
    groups: list[list[Claim]] = []
    for claim in (c for c in claims if c.competes):
        group = next((g for g in groups if any(same_answer(claim.answer, c.answer) for c in g)), None)
        if group is None:
            groups.append([claim])
        else:
            group.append(claim)
    sides = [_side(group, independence, texts) for group in groups]
    return sorted(sides, key=lambda s: -s.witnesses)


def _side(claims: list[Claim], independence: Independence, texts: dict[str, str]) -> Side:
    wording = max((c.answer for c in claims), key=lambda a: (len(normalize_answer(a).split()), len(a)))
    abouts = Counter(c.about for c in claims if c.about)
    passages = list(dict.fromkeys(c.passage_id for c in claims))
    corroborating = [pid for pid, text in texts.items() if quote_in_passage(wording, text)]
    return Side(answer=wording, about=abouts.most_common(1)[0][0] if abouts else "", claims=claims,
                passages=passages, witnesses=independence.witnesses(list(dict.fromkeys(passages + corroborating))))


def about_same(a: str, b: str, similarity: float) -> bool:
    """Two descriptions of what a claim is about name the same thing: near-identical word sets once normalised.
    An empty one says nothing, so it matches nothing."""
    x, y = normalize_answer(a), normalize_answer(b)
    return bool(x) and bool(y) and fuzz.token_set_ratio(x, y) >= similarity * 100


_FUNCTION_WORDS = frozenset({"and", "or", "of", "in", "on", "at", "to", "for", "by", "with", "from", "is", "was", "are",
                             "were", "be", "its", "his", "her", "their"})


def thing_of(claim: Claim, question: str) -> str:
    """What a claim is about, without its answer's words: the 1.5B model often writes the answer itself there
    ("Taylor Swift", "Metallica is the artist of the album", "Oregon and Wisconsin"), which says nothing about which
    thing it is. An about left with no word but function words is read as the thing the question asks about."""
    answer = set(normalize_answer(claim.answer).split())
    rest = [word for word in normalize_answer(claim.about).split() if word not in answer]
    return " ".join(rest) if set(rest) - _FUNCTION_WORDS else normalize_answer(question)


def _linked(a: Side, b: Side, independence: Independence, similarity: float | None, question: str) -> bool:
    one_document = ({independence.document[p] for p in a.passages} & {independence.document[p] for p in b.passages})
    if one_document or similarity is None:
        return bool(one_document)
    return any(about_same(thing_of(x, question), thing_of(y, question), similarity) for x in a.claims for y in b.claims)


def things(sides: list[Side], independence: Independence, similarity: float | None, question: str,
           in_time: frozenset[int] = frozenset()) -> list[list[Side]]:
    """Sides grouped by what they are about (linked sides, transitively): a group of several is a conflict.
    ``similarity`` None links versions of one document only. ``in_time``: the ids of sides that answer one question
    at different dates (a question that names a date asks for the answer valid then, so its dated answers compete
    whatever the model says they are about)."""
    links = [(i, j) for i in range(len(sides)) for j in range(i + 1, len(sides))
             if {id(sides[i]), id(sides[j])} <= in_time
             or _linked(sides[i], sides[j], independence, similarity, question)]
    component = components(len(sides), links)
    groups: dict[int, list[Side]] = {}
    for side, root in zip(sides, component, strict=True):
        groups.setdefault(root, []).append(side)
    return list(groups.values())
