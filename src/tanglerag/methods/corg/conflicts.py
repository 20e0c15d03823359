"""``corg.conflicts=support``: of two answers the context graph says contradict each other, keep the better-backed.

COrg as published answers contexts labelled counterfactual in separate groups and lists every group's answer, so a
misinformation document's answer stands beside the true one. MADAM-RAG's aggregator discards an answer that
conflicts with a better-supported one; this applies that rule with COrg's own evidence and no extra call. Two
answers conflict when they differ and a context one cites is counterfactual to a context the other cites; an
answer's support is the contexts it cites plus those the reranker dropped as their duplicates. A tie keeps both:
the graph cannot say which one is right.
"""

from __future__ import annotations

from collections import Counter

from tanglerag.methods.corg.reranker import Organized
from tanglerag.methods.corg.steps import ConflictsStep, OverruledAnswer
from tanglerag.text import normalize_answer
from tanglerag.types import AnswerPart, RetrievedPassage


def overrule(parts: list[AnswerPart], organized: Organized,
             passages: list[RetrievedPassage]) -> tuple[list[AnswerPart], ConflictsStep]:
    """The parts no better-backed contradicting part overrules, and the step that names the overruled ones."""
    ids = [p.passage.id for p in passages]
    conflicting = {frozenset((ids[i], ids[j])) for i, j in organized.conflicts}
    copies = Counter(ids[d.kept_instead] for d in organized.dropped if d.reason == "duplicate")
    support = [len(part.citations) + sum(copies[c] for c in part.citations) for part in parts]

    def contradicts(a: AnswerPart, b: AnswerPart) -> bool:
        return normalize_answer(a.answer) != normalize_answer(b.answer) and any(
            frozenset((x, y)) in conflicting for x in a.citations for y in b.citations)

    kept, overruled = [], []
    for i, part in enumerate(parts):
        winner = max((j for j, other in enumerate(parts) if support[j] > support[i] and contradicts(part, other)),
                     key=lambda j: support[j], default=None)
        if winner is None:
            kept.append(part)
        else:
            overruled.append(OverruledAnswer(answer=part.answer, citations=part.citations, support=support[i],
                                             kept_answer=parts[winner].answer, kept_support=support[winner]))
    return kept, ConflictsStep(overruled=overruled)
