"""Whether a passage answers the question asked, without the model.

Retrieval over a real corpus brings passages written for other questions; the 1.5B model still reads a claim from
most of them ("May 31 2019 (Thomas Rhett's new album)" for a question about a game's release), and a dated claim of
another topic then wins on its date. A claim competes only when its passage holds every year the question names and
enough of its content words: the share of them found, inflected or not, in the passage's title, text and named
source. Crude on purpose: it costs nothing, the trace shows it ("about another question: relevance 0.25"), and its
threshold, ``ledger.relevance``, is chosen on the tune half of RAMDocs dev (docs/results/conflicts.md).
"""

from __future__ import annotations

import importlib.util
import os
import re
from functools import cache
from pathlib import Path

from tanglerag.text import normalize_answer

_ASKING = frozenset({"new", "latest", "current", "currently", "now", "today", "recent", "recently", "newest", "year",
                     "much", "many", "name", "called", "does", "did", "do", "was", "were", "is", "are", "has", "had",
                     "play", "plays", "played", "come", "comes", "coming", "came", "going", "get", "got"})
"""Words that say how a question asks rather than what it is about."""


@cache
def _stop_words() -> frozenset[str]:
    """scikit-learn's English stop words and ours. The list is read from the one file of scikit-learn that holds it:
    importing ``sklearn.feature_extraction`` loads pandas and scipy.stats with it, 2.8 s that every ``ask`` of the
    default method paid before its first answer."""
    return _sklearn_stop_words() | _ASKING


def _sklearn_stop_words() -> frozenset[str]:
    """The list from its own file, run alone (it imports nothing); where a release moved or changed that file,
    through the documented import instead."""
    path = _stop_words_file()
    spec = importlib.util.spec_from_file_location("tanglerag_sklearn_stop_words", path) if path else None
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            return frozenset(module.ENGLISH_STOP_WORDS)
        except (ImportError, AttributeError, OSError, SyntaxError):
            pass
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _stop_words_file() -> Path | None:
    """scikit-learn's file of stop words, found without running the package; None where it is not there."""
    package = importlib.util.find_spec("sklearn")
    folders = list(package.submodule_search_locations or []) if package is not None else []
    path = Path(folders[0]) / "feature_extraction" / "_stop_words.py" if folders else None
    return path if path is not None and path.is_file() else None


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


_NAME = re.compile(r"(?<![.?!:] )\b[A-Z][\w-]*[a-z0-9][\w-]*(?:(?:'s|\u2019s)?\s+[A-Z0-9][\w-]*)*")
_DATE_WORDS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
                         "february", "march", "april", "june", "july", "august", "september", "october", "november",
                         "december", "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays",
                         "sundays"})


def asked_names(question: str) -> list[set[str]]:
    """The names a question asks about: each run of capitalised words past its first word ("Millbrook Library",
    "Tom", "Aisha", "Hearthguard Gold"), as the set of its words, less stop words and the names of days and months
    (a date, not a thing); lower-cased."""
    body = question.strip()
    body = body[len(body.split(" ", 1)[0]):]  # the first word is capitalised as a sentence's
    names = []
    for run in _NAME.findall(body):
        words = {w for w in normalize_answer(re.sub(r"'s\b|\u2019s\b", "", run)).split()
                 if w not in _stop_words() and w not in _DATE_WORDS}
        if words:
            names.append(words)
    return names


def name_stems(question: str) -> set[str]:
    """The stems of the capitalised words past a question's first: the names it asks about, word by word, counted
    apart from what it asks of them."""
    return content_stems(" ".join(re.findall(r"(?<=\s)[A-Z]\w+", question)))


def missing_names(question: str, passage: str) -> list[str]:
    """The question's names a passage does not hold (every word of a name, inflected or not), when it holds fewer
    than half of them; else none. A page about the Central library that never names Millbrook does not answer for
    Millbrook Library's hours, nor one about Maya and Jonas for Tom and Aisha's wedding; a note about "the Ghent
    office" still answers for "the Brightwell office in Ghent", and one store's page for "the Lisbon and Porto
    stores"."""
    names = asked_names(question)
    held = set(normalize_answer(passage).split())
    missing = [name for name in names if not holds(held, name)]
    if not names or 2 * (len(names) - len(missing)) >= len(names):
        return []
    return [" ".join(sorted(name)) for name in missing]


def names_every_name(question: str, passage: str) -> bool:
    """Whether the question asks about names (``asked_names``) and the passage holds every word of each: two
    documents that both do speak of the one thing asked about, whoever wrote them."""
    names = asked_names(question)
    held = set(normalize_answer(passage).split())
    return bool(names) and all(holds(held, name) for name in names)


def shared(words: set[str], text: str) -> int:
    """How many of ``words`` the text's content words hold, inflected or not."""
    held = content_words(text)
    return sum(any(_alike(word, other) for other in held) for word in words)


def holds(held: set[str], name: set[str]) -> bool:
    """Whether the words ``held`` hold every word of ``name``, inflected or not."""
    return all(any(_alike(word, other) for other in held) for word in name)
