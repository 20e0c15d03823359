"""The ``probe`` route: answer from the answers the probe's call gave per passage, with no further call.

The probe already asked the model, in one call, for each passage's answer and the descriptor of what the passage is
about; that is a post-fusion vote and COrg's entity groups in miniature. Passages that name the same descriptor
vote on its answer (most passages win, ties go to the better-ranked one); a passage that names no descriptor joins
the group whose answer it gives, or, when no passage names one, they all vote together. One line per group's answer
(COrg's ``answer (descriptor) [n]`` shape), answers repeated across groups merged. Whether this beats routing to a
method that goes over the passages again is measured, per tangle, in docs/results/auto.md.
"""

from __future__ import annotations

from collections import Counter

from tanglerag.methods.auto.probe import PassageAnswer, gives_answer, named_descriptor
from tanglerag.methods.base import MethodOutput
from tanglerag.stages.multi_answer import render
from tanglerag.text import normalize_answer
from tanglerag.types import AnswerPart, RetrievedPassage

PROBE_ROUTE = "probe"


def answer_from_probe(per_passage: dict[int, PassageAnswer], passages: list[RetrievedPassage]) -> MethodOutput:
    answering = {n: r for n, r in sorted(per_passage.items()) if gives_answer(r) and n <= len(passages)}
    if not answering:
        return MethodOutput.abstain(passages)
    parts: dict[str, AnswerPart] = {}
    for descriptor, members in _groups(answering).items():
        winner = _vote([answering[n] for n in members])
        supporting = [n for n in members if normalize_answer(answering[n].answer) == winner]
        cited = [passages[n - 1].passage.id for n in supporting]
        if winner in parts:
            parts[winner].citations += [c for c in cited if c not in parts[winner].citations]
        else:
            first = answering[supporting[0]]
            parts[winner] = AnswerPart(answer=first.answer.strip(), descriptor=first.descriptor.strip() if descriptor
                                       else "", citations=cited)
    text, citations = render(list(parts.values()), passages)
    return MethodOutput(text, citations, parts=list(parts.values()))


def _groups(answering: dict[int, PassageAnswer]) -> dict[str, list[int]]:
    """Passage numbers by named descriptor; a passage naming none joins the groups whose passages give its answer."""
    groups: dict[str, list[int]] = {}
    for n, given in answering.items():
        if named_descriptor(given):
            groups.setdefault(named_descriptor(given), []).append(n)
    if not groups:
        return {"": list(answering)}
    for n, given in answering.items():
        if not named_descriptor(given):
            answer = normalize_answer(given.answer)
            for members in groups.values():
                if any(normalize_answer(answering[m].answer) == answer for m in members):
                    members.append(n)
    return groups


def _vote(given: list[PassageAnswer]) -> str:
    """The normalized answer most passages give; a tie goes to the answer of the best-ranked passage."""
    votes = Counter(normalize_answer(r.answer) for r in given)
    return max(votes, key=lambda answer: votes[answer])  # max keeps the first of equals: passages come in rank order
