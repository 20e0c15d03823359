"""Metrics of ambiguous-question answering (AmbigDocs, used by COrg): Ans, Ent, EAR, D-F1.

Each gold disambiguation (entity, descriptor, answer, sub-question) is scored against the whole
response and the scores are averaged: Ans and Ent are token recalls of the answer and of the
descriptor, EAR averages their product per disambiguation (Ent and EAR over the readings that have a
descriptor; undefined for a question with none), D-F1 lets a QA reader answer each
sub-question from the response and takes token F1 against that disambiguation's answer.
"""

from __future__ import annotations

from collections import Counter

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.metrics.registry import METRICS, READER_METRICS, Reader
from tanglerag.text import asserted_text, best_over, normalize_answer, strip_citations, token_f1
from tanglerag.types import Answer


def token_recall(gold: str, response: str) -> float:
    """Share of the gold's normalized tokens found in the response; 1.0 for an empty gold."""
    gold_tokens = normalize_answer(gold).split()
    if not gold_tokens:
        return 1.0
    common = Counter(gold_tokens) & Counter(normalize_answer(response).split())
    return sum(common.values()) / len(gold_tokens)


def readings(example: QAExample) -> list[Disambiguation]:
    """The gold disambiguated readings (answer, descriptor, sub-question) stored with an ambiguous example."""
    return [Disambiguation.model_validate(d) for d in example.metadata.get("disambig", [])]


def _response(answer: Answer) -> str:
    """The response without citation marks, one answer per line as generated."""
    if answer.is_unknown:
        return ""
    return "\n".join(filter(None, (strip_citations(line) for line in asserted_text(answer.text).splitlines())))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@METRICS.add("ans")
def answer_token_recall(answer: Answer, example: QAExample) -> float | None:
    """Mean token recall of each gold answer (the disambiguations', else the example's) in the response."""
    golds = [d.answer for d in readings(example)] or example.answers
    return _mean([token_recall(g, _response(answer)) for g in golds])


def described_readings(example: QAExample) -> list[Disambiguation]:
    """Readings with a descriptor: the only ones Ent and EAR can score (an empty descriptor would be
    "recalled" by any response, "unknown" included). Reports say how many readings this leaves out."""
    return [d for d in readings(example) if normalize_answer(d.descriptor)]


@METRICS.add("ent")
def entity_recall(answer: Answer, example: QAExample) -> float | None:
    return _mean([token_recall(d.descriptor, _response(answer)) for d in described_readings(example)])


@METRICS.add("ear")
def entity_answer_recall(answer: Answer, example: QAExample) -> float | None:
    response = _response(answer)
    return _mean([token_recall(d.descriptor, response) * token_recall(d.answer, response)
                  for d in described_readings(example)])


@READER_METRICS.add("d_f1")
def disambig_f1(answer: Answer, example: QAExample, reader: Reader) -> float | None:
    golds = readings(example)
    response = _response(answer)
    if not response:
        return 0.0 if golds else None
    return _mean([best_over(token_f1, reader.read(response, d.sub_question), d.answers) for d in golds])


def _contains(text: str, gold: str) -> bool:
    gold = normalize_answer(gold)
    return bool(gold) and f" {gold} " in f" {normalize_answer(text)} "


@METRICS.add("situated_f1")
def situated_f1(answer: Answer, example: QAExample) -> float | None:
    """SituatedQA-style F1 over answer sets (Diva, paper 001): recall is the share of readings (contexts) whose
    answer the response states; precision the share of the response's answers (its parts, or the whole text
    when it has none) that are some reading's answer."""
    golds = readings(example)
    if not golds:
        return None
    if answer.is_unknown:
        return 0.0
    predicted = [p.answer for p in answer.parts] or [_response(answer)]
    recall = sum(any(_contains(p, g) for p in predicted for g in r.answers) for r in golds) / len(golds)
    precision = sum(any(_contains(p, g) for r in golds for g in r.answers) for p in predicted) / len(predicted)
    return 0.0 if recall + precision == 0 else 2 * precision * recall / (precision + recall)
