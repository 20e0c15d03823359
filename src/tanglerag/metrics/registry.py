"""Named per-question metrics. Methods' issues register more (D-F1, %NM, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from tanglerag.answer_parsing import UNKNOWN, strip_citations
from tanglerag.datasets.base import QAExample
from tanglerag.metrics.squad import best_over, exact_match, token_f1
from tanglerag.types import Answer

Metric = Callable[[Answer, QAExample], float | None]
"""A per-question score; None where the metric does not apply to the method (e.g. %NM without a vote)."""
METRICS: dict[str, Metric] = {}


class Reader(Protocol):
    """A QA model that answers a question from a text (D-F1 reads generated responses with it)."""

    def read(self, text: str, question: str) -> str: ...


ReaderMetric = Callable[[Answer, QAExample, Reader], float | None]
READER_METRICS: dict[str, ReaderMetric] = {}


def register(name: str) -> Callable[[Metric], Metric]:
    def wrap(fn: Metric) -> Metric:
        METRICS[name] = fn
        return fn
    return wrap


def register_reader_metric(name: str) -> Callable[[ReaderMetric], ReaderMetric]:
    def wrap(fn: ReaderMetric) -> ReaderMetric:
        READER_METRICS[name] = fn
        return fn
    return wrap


def _prediction(answer: Answer) -> str:
    return UNKNOWN if answer.is_unknown else strip_citations(answer.text)


@register("em")
def em(answer: Answer, example: QAExample) -> float:
    return 0.0 if answer.is_unknown else best_over(exact_match, _prediction(answer), example.answers)


@register("f1")
def f1(answer: Answer, example: QAExample) -> float:
    return 0.0 if answer.is_unknown else best_over(token_f1, _prediction(answer), example.answers)


@register("unk")
def unknown_rate(answer: Answer, example: QAExample) -> float:
    return float(answer.is_unknown)


@register("cited")
def cited(answer: Answer, example: QAExample) -> float:
    """Share of non-unknown answers that cite at least one passage."""
    return float(not answer.is_unknown and bool(answer.citations))


@register("misled")
def misled(answer: Answer, example: QAExample) -> float | None:
    """The answer repeats a known wrong answer (RAMDocs misinformation); None without such labels."""
    wrong = example.metadata.get("wrong_answers")
    if not wrong:
        return None
    return 0.0 if answer.is_unknown else best_over(exact_match, _prediction(answer), wrong)


@register("nm")
def not_majority(answer: Answer, example: QAExample) -> float | None:
    """%NM: a gold answer is in the answer pool but the final answer is not gold."""
    if "pool" not in answer.extras and "fallback" not in answer.extras:
        return None
    pool = [c["answer"] for c in answer.extras.get("pool", []) if not c["unknown"]]
    gold_in_pool = any(best_over(exact_match, strip_citations(a), example.answers) for a in pool)
    return float(gold_in_pool and not em(answer, example))


def compute(names: list[str], answer: Answer, example: QAExample,
            reader: Reader | None = None) -> dict[str, float | None]:
    unknown = [n for n in names if n not in METRICS and n not in READER_METRICS]
    if unknown:
        available = sorted([*METRICS, *READER_METRICS])
        raise ValueError(f"unknown metric(s) {unknown}; available: {', '.join(available)}")
    scores = {}
    for name in names:
        if name in METRICS:
            scores[name] = METRICS[name](answer, example)
        elif reader is None:
            raise ValueError(f"metric {name!r} needs a QA reader")
        else:
            scores[name] = READER_METRICS[name](answer, example, reader)
    return scores
