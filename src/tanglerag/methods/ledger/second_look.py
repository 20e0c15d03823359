"""Rule ``second-look``: an "unknown" asked once more over the sentences that answer in the question's own words.

The 1.5B model says "unknown" beside a passage that answers in the question's words: "The tramway was closed in 1938"
for "When did the Cragmoor tramway close?" (g-cragmoor-tramway-trail-2), "He learned his trade on the two-year course
at Hawkmoor College of Furniture" under "Osric Fenlow, chairmaker" for where the chairmaker learned his trade
(g-osric-fenlow-1), the ranked passages around them each a few hundred words about other things. Shown alone, such a
sentence (under its page's title, which often names who "he" is) is read. Only a passage on topic that names every
name the question asks about offers one, and only a sentence holding one of the question's other content words itself
(the one holding most of them), with the rest in it, its heading or its page's title and opening line: a sentence
about another thing of a similar name, or about the same thing's other property, offers none, so an "unknown" that is
right stays one.
"""

from __future__ import annotations

import re

from tanglerag.methods.ledger.relevance import asked_names, content_words, names_every_name, shared
from tanglerag.methods.ledger.scoped import sentence_contexts
from tanglerag.types import RetrievedPassage

LIMIT = 3
"""Sentences shown at most (one a passage, in the passages' order): the second look stays a short prompt."""


def answering_sentences(question: str, shown: list[RetrievedPassage], relevant: set[str]) -> list[RetrievedPassage]:
    """The shown passages on topic that answer in the question's words, each cut to its answering sentence, in their
    order; none when the question names nothing or asks nothing besides its names."""
    names = asked_names(question)
    named = set().union(*names)
    asked = {w for w in content_words(question) if w not in named}
    if not names or not asked:
        return []
    out = []
    for hit in shown:
        passage = hit.passage
        if passage.id not in relevant or not names_every_name(question, f"{passage.title}\n{passage.text}"):
            continue
        opening = passage.text.strip().split("\n", 1)[0]
        opening = opening if len(opening.split()) <= _OPENING_WORDS else ""
        answering = [(shared(asked, own), -n, own) for n, (context, own) in enumerate(sentence_contexts(hit))
                     if shared(asked, own) and shared(asked, f"{context} {opening}") == len(asked)]
        if answering:  # the sentence holding most of the question's words itself, the first of those
            text = _window(passage.text, max(answering)[2])
            out.append(hit.model_copy(update={"passage": passage.model_copy(update={"text": text})}))
        if len(out) == LIMIT:
            break
    return out


_OPENING_WORDS = 12
"""A passage's first line counts as its heading ("# Maker of the month: Osric Fenlow, chairmaker") up to this many
words; a longer one is prose."""
_END = re.compile(r"[.!?](?=\s|$)|\x07")
_BREAK = re.compile(r"\n[ \t]*(?=\n|[|#*\-\u2022]|\d+[.)]\s)")
"""A line that starts a new block (a blank line, a table row, a heading, a list item): a sentence never runs on
across it; marked with the bell character, which no page writes and which ``str.split`` keeps."""
_WINDOW = 500
"""Characters a sentence is cut at: a run of lines with no stop is no sentence of a page."""


def _window(text: str, own: str) -> str:
    """The answering sentence whole, read across hard-wrapped lines ("He learned his trade ... at Hawkmoor" /
    "College of Furniture, finishing in 2016."), which the sentence splitter parts at a line starting with a capital,
    but not past a blank line, a table row, a heading or a list item; its page's title, shown with it, says who "he"
    is."""
    flat, own = " ".join(_BREAK.sub("\x07", text).split()), " ".join(own.split())
    at = flat.find(own)
    if at < 0:
        return own
    starts = [m.end() for m in _END.finditer(flat, 0, at)]
    start = starts[-1] if starts and at - starts[-1] <= _WINDOW // 2 else at
    stop = _END.search(flat, at + max(len(own) - 1, 1))  # its own stops ("7 p.m. and ...") are inside it
    return flat[start:stop.end() if stop is not None else len(flat)][:_WINDOW].replace("\x07", " ").strip()
