"""What ``auto`` saw in an eval run, and how each method did per tangle: the evidence for retuning ``auto.routes``.

For every question ``auto`` answered, its trace says which tangle the probe found and which method it chose. Where
the same run answered those questions with other methods too, their scores per tangle show which method would have
done best; the suggestion is a settings file (``auto: routes: ...``), not code.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel

from tanglerag.errors import InputError
from tanglerag.eval.runs import Run
from tanglerag.methods.auto.steps import AutoStep


class TangleRow(BaseModel):
    tangle: str
    questions: int
    routes: dict[str, int]  # method auto chose -> how often
    scores: dict[str, float]  # method -> mean score on these questions (auto included)
    best: str | None  # the best-scoring method other than auto (ties: fewer LLM calls)


class Diagnosis(BaseModel):
    run: str
    metric: str
    rows: list[TangleRow]

    def suggested_routes(self, current: dict[str, str]) -> dict[str, str]:
        """The current routes, with each tangle that has a better-scoring method in this run moved to it."""
        suggested = dict(current)
        for row in self.rows:
            if row.best is not None and row.scores[row.best] > row.scores.get(current.get(row.tangle, ""), -1.0):
                suggested[row.tangle] = row.best
        return suggested


def diagnose(run: Run, metric: str) -> Diagnosis:
    """Per tangle found by ``auto``: questions, routes taken, and every method's mean ``metric`` on them."""
    if "auto" not in run.methods:
        raise InputError(f"run {run.info.name!r} has no answers from auto (it has {', '.join(run.methods)})")
    if metric not in run.metrics:
        raise InputError(f"run {run.info.name!r} has no metric {metric!r} (it has {', '.join(run.metrics)})")
    by_tangle: dict[str, list[str]] = defaultdict(list)
    routes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for qid, answers in run.by_question.items():
        step = answers["auto"].trace.find(AutoStep) if "auto" in answers else None
        if step is not None:
            by_tangle[step.tangle].append(qid)
            routes[step.tangle][step.route] += 1
    rows = []
    for tangle, ids in sorted(by_tangle.items(), key=lambda item: -len(item[1])):
        scores, calls = {}, {}
        for method in run.methods:
            answered = [run.by_question[q][method] for q in ids if method in run.by_question[q]]
            values = [v for p in answered if (v := p.metrics.get(metric)) is not None]
            if values:
                scores[method] = sum(values) / len(values)
                calls[method] = sum(p.usage.get("llm_calls", 0) + p.usage.get("cached_calls", 0) for p in answered)
        others = [m for m in scores if m != "auto"]
        best = max(others, key=lambda m: (scores[m], -calls[m])) if others else None
        rows.append(TangleRow(tangle=tangle, questions=len(ids), routes=dict(routes[tangle]), scores=scores, best=best))
    return Diagnosis(run=run.info.name, metric=metric, rows=rows)
