"""The one metric registry: per-answer metrics, reader metrics (D-F1) and ranking metrics (trec_eval).

Answer metrics score one Answer against one example and read the answer's typed trace where they
need a method's decisions; a method family declares the metrics that read its own steps (``Family.metrics``:
post-fusion's %NM). Ranking metrics score whole runs of ranked ids against relevance judgments with trec_eval
(document and context recall, MAP). The tables are ``Registry`` objects, filled by the metric modules of this
package (``tanglerag.metrics`` imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from tanglerag.datasets.base import QAExample
from tanglerag.errors import ConfigError, InputError
from tanglerag.family import families
from tanglerag.registry import Registry
from tanglerag.text import UNKNOWN, asserted_text, best_over, exact_match, normalize_answer, strip_citations, token_f1
from tanglerag.types import Answer

Metric = Callable[[Answer, QAExample], float | None]
"""A per-question score; None where the metric does not apply to the method (e.g. %NM without a vote)."""
METRICS: Registry[Metric] = Registry("metric")


class Reader(Protocol):
    """A QA model that answers a question from a text (D-F1 reads generated responses with it)."""

    def read(self, text: str, question: str) -> str: ...


ReaderMetric = Callable[[Answer, QAExample, Reader], float | None]
READER_METRICS: Registry[ReaderMetric] = Registry("reader metric")


CutoffMetric = Callable[[int], Metric]
CUTOFF_METRICS: Registry[CutoffMetric] = Registry("metric with a cut-off")
"""Metrics with a cut-off in the name, e.g. ``mrecall@5``: the prefix maps to a factory taking k."""
DerivedMetric = Callable[[dict[str, float | None]], float | None]
DERIVED: Registry[DerivedMetric] = Registry("derived metric")
"""Metrics computed from a run's mean scores (e.g. DR from mean ROUGE-L and D-F1), not per question."""


def resolve(name: str) -> Metric | None:
    """A per-question metric by name: the registry's, a family's own (``Family.metrics``, e.g. post-fusion's %NM),
    or one with a cut-off such as ``mrecall@5``."""
    if name in METRICS:
        return METRICS.get(name)
    if name in (declared := family_metrics()):
        return declared[name]
    for prefix, factory in CUTOFF_METRICS.items():
        if name.startswith(prefix) and name[len(prefix):].isdigit() and int(name[len(prefix):]) > 0:
            return factory(int(name[len(prefix):]))
    return None


def family_metrics() -> dict[str, Metric]:
    """The metrics the registered families declare; one named like a registry metric would be silently hidden by
    it, so it is refused."""
    declared: dict[str, Metric] = {}
    for family in families():
        for name, metric in family.metrics.items():
            if name in METRICS or name in READER_METRICS or name in DERIVED:
                raise ConfigError(f"family {family.name!r} declares a metric {name!r}, a name the metric registry "
                                  "already has: rename it")
            declared[name] = metric
    return declared


def _prediction(answer: Answer) -> str:
    return UNKNOWN if answer.is_unknown else strip_citations(asserted_text(answer.text))


@METRICS.add("em")
def em(answer: Answer, example: QAExample) -> float:
    return 0.0 if answer.is_unknown else best_over(exact_match, _prediction(answer), example.answers)


@METRICS.add("f1")
def f1(answer: Answer, example: QAExample) -> float:
    return 0.0 if answer.is_unknown else best_over(token_f1, _prediction(answer), example.answers)


@METRICS.add("accuracy")
def accuracy(answer: Answer, example: QAExample) -> float:
    """A gold answer string contained in the output (the loose match CDIT's paper uses, after PopQA)."""
    if answer.is_unknown:
        return 0.0
    text = f" {normalize_answer(strip_citations(asserted_text(answer.text)))} "
    return float(any(f" {normalize_answer(g)} " in text for g in example.answers if normalize_answer(g)))


@METRICS.add("unk")
def unknown_rate(answer: Answer, example: QAExample) -> float:
    return float(answer.is_unknown)


@METRICS.add("cited")
def cited(answer: Answer, example: QAExample) -> float:
    """Share of non-unknown answers that cite at least one passage."""
    return float(not answer.is_unknown and bool(answer.citations))


@METRICS.add("misled")
def misled(answer: Answer, example: QAExample) -> float | None:
    """The answer repeats a known wrong answer (RAMDocs misinformation); None without such labels."""
    wrong = example.metadata.get("wrong_answers")
    if not wrong:
        return None
    return 0.0 if answer.is_unknown else best_over(exact_match, _prediction(answer), wrong)



def needs_reader(names: list[str]) -> bool:
    return any(name in READER_METRICS for name in names)


def check_names(names: list[str]) -> None:
    """Raise InputError naming every metric the registry does not know (before any LLM call is spent)."""
    unknown = [n for n in names if resolve(n) is None and n not in READER_METRICS and n not in DERIVED]
    if unknown:
        available = sorted([*METRICS, *READER_METRICS, *DERIVED, *family_metrics(), *(f"{p}K" for p in CUTOFF_METRICS)])
        raise InputError(f"unknown metric(s) {unknown}; available: {', '.join(available)}")


def compute(names: list[str], answer: Answer, example: QAExample,
            reader: Reader | None = None) -> dict[str, float | None]:
    """Per-question scores; derived metrics (see ``DERIVED``) are left to ``derive`` over a run."""
    check_names(names)
    scores = {}
    for name in names:
        if name in DERIVED:
            continue
        if name in READER_METRICS:
            if reader is None:
                raise ValueError(f"metric {name!r} needs a QA reader")  # the runner builds one: reaching here is a bug
            scores[name] = READER_METRICS.get(name)(answer, example, reader)
        else:
            metric = resolve(name)
            assert metric is not None, name  # check_names refused unknown names above
            scores[name] = metric(answer, example)
    return scores


def derive(names: list[str], means: dict[str, float | None]) -> dict[str, float | None]:
    """The derived metrics among ``names``, from a run's mean scores."""
    return {name: DERIVED.get(name)(means) for name in names if name in DERIVED}


Judgments = dict[str, dict[str, int]]
"""query id -> {relevant id: relevance}"""
Ranking = dict[str, dict[str, float]]
"""query id -> {retrieved id: score}, ids in the method's ranked order"""
RANKING_METRICS = ("recall@1", "recall@5", "map@5")
"""ranking metric names the PCAS evaluation reports; ``TREC_MEASURES`` lists every name rank_scores knows."""
TREC_MEASURES = {"recall": "recall", "map": "map_cut", "ndcg": "ndcg_cut", "precision": "P", "mrr": "recip_rank"}
"""our name (``name@k``; ``mrr`` without k) -> trec_eval's measure"""


def rank_scores(names: list[str], judgments: Judgments, ranking: Ranking) -> dict[str, float]:
    """Mean ranking metrics by trec_eval (pytrec_eval): a C library, where ranx's numba JIT cost each process
    15-25 s of compiling. Every judged query counts (one without retrieved ids scores 0), and the method's own
    order ranks the ids: trec_eval would break score ties by id, which is not the order the method chose."""
    import pytrec_eval

    measures = {name: _trec_measure(name) for name in names}  # name -> (what to ask for, the key it comes back as)
    ordered = {query: {doc: float(len(ids) - i) for i, doc in enumerate(ids)} for query, ids in ranking.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(judgments, {asked for asked, _ in measures.values()})
    per_query = evaluator.evaluate({query: docs for query, docs in ordered.items() if docs})
    return {name: sum(per_query.get(query, {}).get(key, 0.0) for query in judgments) / max(1, len(judgments))
            for name, (_, key) in measures.items()}


def _trec_measure(name: str) -> tuple[str, str]:
    base, _, cutoff = name.partition("@")
    measure = TREC_MEASURES.get(base)
    if measure is None or (base == "mrr") != (cutoff == "") or (cutoff and not cutoff.isdigit()):
        raise InputError(f"unknown ranking metric {name!r}; use recall@k, map@k, ndcg@k, precision@k or mrr")
    return (f"{measure}.{cutoff}", f"{measure}_{cutoff}") if cutoff else (measure, measure)
