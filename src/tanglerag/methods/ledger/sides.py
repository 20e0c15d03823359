"""From claims to sides, and sides to the things they are about.

A side is one answer: claims whose normalised answers are equal, or one of which contains the other as whole words
("1963" and "17 February 1963"), are one side, shown by its most specific wording. Only grounded claims make sides: a
claim whose passage holds neither its quote nor its answer's words is the model's misreading, not a source's claim
(the ledger keeps it, marked). A side's witnesses are the independent sources that state its answer: its claims'
passages and every other passage whose text holds its most specific wording, words in order (the model reads one
claim a passage, so a passage that also names the answer corroborates it; a planted answer is mostly found in its one
edited passage only: on RAMDocs dev this lowers the leak from 36.1% to 27.9%, docs/results/conflicts.md). Two sides are about the same thing, so their
answers conflict, when a claim of each comes from one document (versions of it) or, unless ``ledger.same_thing`` is
``versions``, their claims' ``about`` match and their passages describe it alike; otherwise they answer for
different things and are complementary.

Why the descriptions: the 1.5B model gives two people of one name one ``about`` (the bare name), so "AFL" and
"basketball" for two Ryan Davises became a dispute and one of them was rejected. Passages about one thing share words
beyond the question's and the answers' (the league, the town, the band); passages about two things of one name share
almost none. ``ledger.description_overlap`` (the share of the smaller side's content words the other holds) is
chosen on the tune half of RAMDocs dev (docs/results/conflicts.md).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

from tanglerag.conflicts import Claim, Side, quote_in_passage
from tanglerag.methods.ledger.independence import Independence, components
from tanglerag.methods.ledger.relevance import content_stems, stem
from tanglerag.methods.ledger.values import same_value
from tanglerag.text import normalize_answer


def same_answer(a: str, b: str, values: bool = True) -> bool:
    """One answer: equal once normalised, one holding the other as whole words, or (``values``) one value written
    in other words or units (``ledger.values``, the ``same-value`` rule: "half an hour" and "30 minutes")."""
    x, y = normalize_answer(a), normalize_answer(b)
    if not x or not y:
        return False
    return x == y or f" {x} " in f" {y} " or f" {y} " in f" {x} " or (values and same_value(a, b))


def build_sides(claims: list[Claim], independence: Independence, texts: dict[str, str],
                values: bool = True) -> list[Side]:
    """One side per answer the competing claims give, in the order the passages came; the most witnessed first.
    ``texts``: every passage's text by id, for the passages that corroborate an answer they were not read for;
    ``values``: answers naming one value in other units are one side (the ``same-value`` rule)."""
    groups: list[list[Claim]] = []
    for claim in (c for c in claims if c.competes):
        group = next((g for g in groups if any(same_answer(claim.answer, c.answer, values) for c in g)), None)
        if group is None:
            groups.append([claim])
        else:
            group.append(claim)
    sides = [_side(group, independence, texts) for group in groups]
    return sorted(sides, key=lambda s: -s.witnesses)


_COUNTED = re.compile(r"^[\d.,]+$")
_FUNCTION = r"(?:of|and|or|for|to|in|on|at|by|with|per|a|an|the|is|are|was|were)"


def _plural(word: str) -> bool:
    """A second word that ends the unit ("5 consecutive nights"), not one that starts the sentence's next part
    ("42,600 residents according")."""
    return word.lower().endswith("s") and not word.lower().endswith("ss")


def with_unit(answer: str, quotes: list[str]) -> str:
    """A bare number given its unit from the words that state it: "5" read from "a maximum of 5 consecutive
    nights" is "5 consecutive nights", "140" from "up to EUR 140 a night" is "EUR 140" (a small model drops the
    unit a person needs to read the number)."""
    if not _COUNTED.match(answer.strip()) or re.fullmatch(r"1[5-9]\d\d|20\d\d", answer.strip()):
        return answer  # a year has no unit
    for quote in quotes:
        money = re.search(rf"(?<!\w)((?:EUR|USD|GBP|CHF|SEK|JPY) ?|[$€£¥] ?){re.escape(answer.strip())}(?![\d,.]*\d)",
                          quote.replace("*", ""))
        if money:  # "EUR 140", "€140": the currency stands before the number
            return f"{money[1]}{answer.strip()}"
        found = re.search(rf"(?<![\w.,]){re.escape(answer.strip())}\s+((?!{_FUNCTION}\b)[a-z][\w'-]*(?![.\w])"
                          rf"(?:\s+(?!{_FUNCTION}\b)[a-z][\w'-]*)?)", quote.replace("*", ""))
        if found:
            words = found[1].split()
            return f"{answer.strip()} {' '.join(words if len(words) == 1 or _plural(words[1]) else words[:1])}"
    return answer


def _side(claims: list[Claim], independence: Independence, texts: dict[str, str]) -> Side:
    wording = max((c.answer for c in claims), key=lambda a: (len(normalize_answer(a).split()), len(a)))
    wording = with_unit(wording, [c.quote for c in claims if c.supported])
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


_ADDING = re.compile(r"\b(?:also|as well|in addition|additionally|another|third|fourth|fifth)\b", re.IGNORECASE)
"""Words by which a passage adds an answer to others rather than replacing them."""

_JOINED = re.compile(r"\b(\w+) (?:and|or) (\w+)\b")
"""Two words a question joins: each may name a part the question asks about."""

DESCRIBING_WORDS = 20
"""Content words (besides the question's and the answers') a side's passages need to describe what they are about."""


@dataclass(frozen=True)
class Sameness:
    """What decides whether two sides answer for one thing. Versions of one document always do. With ``about`` None
    (``ledger.same_thing=versions``) nothing else does. Otherwise never when a quote adds to a list or the two name
    different parts the question joins; when a claim's ``about`` names nothing beyond the question or names the
    answer itself (either way it tells nothing apart), the passages (``texts``, by id) decide: they do unless both
    describe their subject at length and differently (``overlap``; 0 takes the ``about``s alone); else their
    ``about``s must match at ``about`` similarity."""

    independence: Independence
    about: float | None
    question: str
    texts: dict[str, str]
    overlap: float = 0.0

    def linked(self, a: Side, b: Side) -> bool:
        document = self.independence.document
        if {document[p] for p in a.passages} & {document[p] for p in b.passages}:
            return True
        if self.about is None:
            return False
        if self.adds_to(a) or self.adds_to(b) or self.different_parts(a, b):
            return False
        pairs = [(x, y) for x in a.claims for y in b.claims]
        if self.overlap > 0 and any(self.bare(x) or self.bare(y) for x, y in pairs):  # such an about tells nothing
            return self.described_alike(a, b)
        return any(about_same(thing_of(x, self.question), thing_of(y, self.question), self.about) for x, y in pairs)

    def adds_to(self, side: Side) -> bool:
        """The words that state the side's answer say it comes on top of others ("can now also be used in Polish",
        "opened a third office, in Tallinn"): a further part of a list, not a rival answer, so a newer date must not
        set the older parts aside. The claim's quote, not its whole passage: a long article says "also" anywhere."""
        asked = {w.lower() for w in _ADDING.findall(self.question)}  # "the third president": the question's word
        return any(any(w.lower() not in asked for w in _ADDING.findall(claim.quote))
                   for claim in side.claims if claim.supported)

    def different_parts(self, a: Side, b: Side) -> bool:
        """The question joins names ("the Lisbon and Porto stores") and the two sides' abouts name different ones of
        them: answers for two parts of the question, not rival answers."""
        first, second = [set().union(*(content_stems(c.about) for c in side.claims)) for side in (a, b)]
        for x, y in _JOINED.findall(normalize_answer(self.question)):
            only = {stem(x)}, {stem(y)}
            if any(one <= first and not other & first and other <= second and not one & second
                   for one, other in (only, only[::-1])):
                return True
        return False

    def bare(self, claim: Claim) -> bool:
        """The claim's ``about`` names nothing the question does not (the bare name), or describes the answer itself
        ("Reggie Miller, a professional basketball player" for "who made the most three point shots"): either way it
        cannot tell two things the question may ask about apart, so the passages' descriptions must."""
        about, answer = normalize_answer(claim.about), normalize_answer(claim.answer)
        names_answer = bool(answer) and f" {answer} " in f" {about} "
        return names_answer or not content_stems(about) - content_stems(self.question)

    def described_alike(self, a: Side, b: Side) -> bool:
        """The passages of the two sides share at least ``overlap`` of the smaller one's content words, leaving out
        the question's words and both answers'. A side whose passages hold fewer than ``DESCRIBING_WORDS`` such words
        says nothing against it: a note of two sentences ("someone on the forum says 9,000") does not describe what
        it is about, so differing words there tell nothing apart."""
        known = content_stems(self.question) | content_stems(a.answer) | content_stems(b.answer)
        words = [set().union(*(content_stems(self.texts.get(p, "")) for p in side.passages)) - known
                 for side in (a, b)]
        smaller = min(len(w) for w in words)
        return smaller < DESCRIBING_WORDS or len(words[0] & words[1]) / smaller >= self.overlap


def things(sides: list[Side], sameness: Sameness, in_time: frozenset[int] = frozenset()) -> list[list[Side]]:
    """Sides grouped by what they are about (linked sides, transitively): a group of several is a conflict.
    ``in_time``: the ids of sides that answer one question at different dates (a question that names a date asks
    for the answer valid then, so its dated answers compete whatever the model says they are about)."""
    links = [(i, j) for i in range(len(sides)) for j in range(i + 1, len(sides))
             if {id(sides[i]), id(sides[j])} <= in_time or sameness.linked(sides[i], sides[j])]
    component = components(len(sides), links)
    groups: dict[int, list[Side]] = {}
    for side, root in zip(sides, component, strict=True):
        groups.setdefault(root, []).append(side)
    return list(groups.values())
