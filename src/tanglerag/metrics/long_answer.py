"""Metrics of long-form answers to ambiguous questions (ASQA, used by Diva): ROUGE-L, DR, MRecall@k.

ROUGE-L is computed with Google's ``rouge-score`` (stemming on) against each gold long answer, best
taken. DR (disambiguation-ROUGE) is the geometric mean of the *mean* ROUGE-L and the mean D-F1, as ASQA
defines it over a run; it is derived from those means by the runner, not averaged per question.
MRecall@k looks at the passages a method answered from: with n gold readings it is a hit when the top
k passages hold the answers of all of them (n <= k), or of at least k of them (n > k); it is undefined for
a method that answered from no passages (closed-book).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.metrics.registry import CUTOFF_METRICS, DERIVED, METRICS, Metric
from tanglerag.text import asserted_text, normalize_answer, strip_citations
from tanglerag.types import Answer


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


@METRICS.add("rouge_l")
def rouge_l(answer: Answer, example: QAExample) -> float | None:
    golds = example.metadata.get("long_answers") or []
    if not golds:
        return None
    if answer.is_unknown:
        return 0.0
    response = strip_citations(asserted_text(answer.text))
    return float(max(_scorer().score(gold, response)["rougeL"].fmeasure for gold in golds))


@DERIVED.add("dr")
def disambiguation_rouge(means: dict[str, float | None]) -> float | None:
    rouge, d_f1 = means.get("rouge_l"), means.get("d_f1")
    return None if rouge is None or d_f1 is None else math.sqrt(rouge * d_f1)


def _found(answers: list[str], texts: list[str]) -> bool:
    return any(f" {normalize_answer(a)} " in text for a in answers if normalize_answer(a) for text in texts)


@CUTOFF_METRICS.add("mrecall@")
def multi_answer_recall(k: int) -> Metric:
    def score(answer: Answer, example: QAExample) -> float | None:
        readings = [Disambiguation.model_validate(d) for d in example.metadata.get("disambig", [])]
        if not readings or not answer.passages:  # no readings, or a method that answered from no passages
            return None
        texts = [f" {normalize_answer(h.passage.text)} " for h in answer.passages[:k]]
        covered = sum(_found(r.answers, texts) for r in readings)
        return float(covered >= min(len(readings), k))
    return score
