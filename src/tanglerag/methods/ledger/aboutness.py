"""How much a sentence, read with its page's title, its heading and its label, is about the question: the share of
the question's content words it holds. A rule compares two sentences this way rather than against a fixed threshold:
a note that a price is undecided (``undecided``) counts against the answer only when it is more about the question
than the sentence the answer's value comes from.
"""

from __future__ import annotations

from tanglerag.methods.ledger.dissent import sentence_values
from tanglerag.methods.ledger.relevance import content_stems
from tanglerag.methods.ledger.scoped import sentence_contexts
from tanglerag.methods.ledger.values import Value
from tanglerag.types import RetrievedPassage


def cover(context: str, asked: set[str]) -> float:
    """The share of the question's content words ``asked`` that a sentence in its context holds."""
    return len(asked & content_stems(context)) / len(asked) if asked else 0.0


def states(sentence: str, said: Value) -> bool:
    """Whether ``sentence`` states the value ``said``."""
    return any(v.same(said) for v, _ in sentence_values(sentence, False))


def holding(said: Value, passages: list[RetrievedPassage], asked: set[str]) -> list[tuple[RetrievedPassage, float]]:
    """Each sentence of ``passages`` stating ``said``, as its passage and how much of the question it holds."""
    return [(hit, cover(context, asked)) for hit in passages for context, own in sentence_contexts(hit)
            if states(own, said)]
