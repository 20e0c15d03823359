"""Whether a passage answers the question asked, without the model.

Retrieval over a real corpus brings passages written for other questions; the 1.5B model still reads a claim from
most of them ("May 31 2019 (Thomas Rhett's new album)" for a question about a game's release), and a dated claim of
another topic then wins on its date. A claim competes only when its passage holds every year the question names and
enough of its content words: the share of them found, inflected or not, in the passage's title, text and named
source. Crude on purpose: it costs nothing, the trace shows it ("about another question: relevance 0.25"), and its
threshold, ``ledger.relevance``, is chosen on the tune half of RAMDocs dev (docs/results/conflicts.md).
"""

from __future__ import annotations

import os
import re
from functools import cache

from tanglerag.text import normalize_answer

_ASKING = frozenset({"new", "latest", "current", "currently", "now", "today", "recent", "recently", "newest", "year",
                     "much", "many", "name", "called", "does", "did", "do", "was", "were", "is", "are", "has", "had",
                     "play", "plays", "played", "come", "comes", "coming", "came", "going", "get", "got"})
"""Words that say how a question asks rather than what it is about."""


@cache
def _stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (imported on first use: ~1 s that no other command should pay) and ours."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | _ASKING


def stem(word: str) -> str:
    """A crude stem for comparing descriptions: no plural s, at most six letters ("games" / "game", "directed" /
    "director"); "boss" and "class" keep their s."""
    if len(word) <= 3:
        return word
    return (word if word.endswith("ss") else word.removesuffix("s"))[:6]


def content_words(text: str) -> set[str]:
    return {w for w in normalize_answer(text).split() if w not in _stop_words()}


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def _alike(a: str, b: str) -> bool:
    """One word, inflected or derived: equal, or sharing a prefix of at least four letters that misses at most two
    of the shorter word's ("file" / "filed", "population" / "populated")."""
    if a == b:
        return True
    common = len(os.path.commonprefix([a, b]))
    return common >= 4 and common >= min(len(a), len(b)) - 2


_YEAR = re.compile(r"\b(?:1[5-9]|20)\d\d\b")


def required_words(question: str) -> set[str]:
    """What a passage must name to answer the question: its years. A year a question is about is content ("the 1998
    final" is not answered by an article on the 2022 one, however newer). Names are not required: on the RAMDocs
    tune half, requiring one of the question's capitalised words cost a valid answer whose excerpt never names its
    subject (strict 37.2 -> 34.9), requiring all of them four more (27.9)."""
    return set(_YEAR.findall(question))


def relevance(question: str, passage: str) -> float:
    """The share of the question's content words the passage holds (1.0 for a question that has none); 0 when it
    lacks one of the question's years."""
    wanted = content_words(question)
    if not wanted:
        return 1.0
    held = content_words(passage)
    if required_words(question) - set(_YEAR.findall(passage)):  # read as written: "2018-19" normalises to "201819"
        return 0.0
    found = [word for word in wanted if word in held or any(_alike(word, other) for other in held)]
    return len(found) / len(wanted)
