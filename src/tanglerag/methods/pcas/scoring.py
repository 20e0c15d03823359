"""Score OR / B1 / B2 / B3 / PCAS on ORCA-ShARC with trec_eval (document R@1, R@5, MAP@5; context R@1)."""

from __future__ import annotations

from itertools import product

from pydantic import BaseModel

from tanglerag.datasets.orca_sharc import OrcaExample
from tanglerag.errors import InputError
from tanglerag.methods.pcas.joint import (
    RETRIEVAL_METHODS,
    JointRanking,
    retrieve_b1,
    retrieve_b2,
    retrieve_b3,
    retrieve_or,
    retrieve_pcas,
)
from tanglerag.methods.pcas.scorers import PairScorer
from tanglerag.metrics.registry import RANKING_METRICS, rank_scores
from tanglerag.tracking import stage, track


class PcasResult(BaseModel):
    method: str
    retriever: str
    doc: dict[str, float]
    context_r1: float | None
    usage: dict[str, float]  # per query: no LLM calls; the time is retrieval (embedding, scoring)
    n: int


def rank(method: str, scorer: PairScorer, example: OrcaExample, documents: list[str], *, lam: float, beam: int,
         depth: int = 5) -> JointRanking:
    gold = example.contexts[example.gold_context] if example.gold_context is not None else None
    if method == "or":
        return retrieve_or(scorer, example.question, gold, depth)
    if method == "b1":
        return retrieve_b1(scorer, example.question, example.contexts, depth)
    if method == "b2":
        return retrieve_b2(scorer, example.question, example.contexts, documents, depth)
    if method == "b3":
        return retrieve_b3(scorer, example.question, example.contexts, depth)
    if method == "pcas":
        return retrieve_pcas(scorer, example.question, example.contexts, beam=beam, lam=lam, depth=depth)
    raise InputError(f"unknown PCAS method {method!r}; choose from {', '.join(RETRIEVAL_METHODS)}")


def score(examples: list[OrcaExample], rankings: list[JointRanking], doc_ids: list[str]) -> tuple[dict[str, float], float | None]:
    doc = rank_scores(list(RANKING_METRICS), {e.id: {e.gold_snippet_id: 1} for e in examples},
                      {e.id: {doc_ids[d]: s for d, s in zip(r.docs, r.doc_scores, strict=True)}
                       for e, r in zip(examples, rankings, strict=True)})
    judged = [(e, r) for e, r in zip(examples, rankings, strict=True)
              if e.gold_context is not None and r.context is not None]
    if not judged:
        return doc, None
    context = rank_scores(["recall@1"], {e.id: {f"c{e.gold_context}": 1} for e, _ in judged},
                          {e.id: {f"c{r.context}": 1.0} for e, r in judged})
    return doc, context["recall@1"]


def run_method(method: str, scorer: PairScorer, examples: list[OrcaExample], doc_ids: list[str],
               documents: list[str], *, lam: float, beam: int, cold: bool = True) -> PcasResult:
    """``cold`` makes the method pay for its own query and context embeddings (for its timing);
    the sweep reuses them across grid points, since there only the scores matter."""
    if cold:
        scorer.reset()
    with track() as tracker, stage("retrieve"):
        rankings = [rank(method, scorer, e, documents, lam=lam, beam=beam) for e in examples]
    doc, ctx = score(examples, rankings, doc_ids)
    usage = {key: value / len(examples) for key, value in tracker.usage.totals().items()}
    return PcasResult(method=method, retriever=scorer.name, doc=doc, context_r1=ctx, usage=usage, n=len(examples))


def sweep(scorer: PairScorer, examples: list[OrcaExample], doc_ids: list[str], documents: list[str],
          lams: list[float], beams: list[int]) -> list[tuple[float, int, PcasResult]]:
    """PCAS over a lambda x beam grid, best first (document R@1, then MAP@5, then context R@1)."""
    grid = [(lam, beam, run_method("pcas", scorer, examples, doc_ids, documents, lam=lam, beam=beam, cold=False))
            for lam, beam in product(lams, beams)]
    return sorted(grid, key=lambda g: (-g[2].doc["recall@1"], -g[2].doc["map@5"], -(g[2].context_r1 or 0.0)))
