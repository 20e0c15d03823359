"""%NM, the metric that reads post-fusion's answer pool; the family declares it (``Family.metrics``)."""

from __future__ import annotations

from tanglerag.datasets.base import QAExample
from tanglerag.methods.post_fusion.steps import AnswerPoolStep, FallbackStep
from tanglerag.metrics.registry import em
from tanglerag.text import best_over, exact_match, strip_citations
from tanglerag.types import Answer


def not_majority(answer: Answer, example: QAExample) -> float | None:
    """%NM: a gold answer is in the answer pool but the final answer is not gold; None where nothing voted."""
    pool_step = answer.trace.find(AnswerPoolStep)
    if pool_step is None and answer.trace.find(FallbackStep) is None:
        return None
    pool = [c.answer for c in (pool_step.pool if pool_step else []) if not c.unknown]
    gold_in_pool = any(best_over(exact_match, strip_citations(a), example.answers) for a in pool)
    return float(gold_in_pool and not em(answer, example))
