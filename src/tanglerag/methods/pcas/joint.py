"""Joint retrieval of a document and the relevant piece of a user's personal context (paper 002).

- ``or``: question + the gold context -> documents (a reference: it is told the context).
- ``b1``: question + all contexts -> documents.
- ``b2``: question -> documents; the top document -> the context most relevant to it.
- ``b3``: question -> the context most relevant to it; question + that context -> documents.
- ``pcas``: top-K documents by s(d,q); for each, its best context by s(d,c); pairs ranked by
  lambda*s(d,q) + (1-lambda)*s(d,c).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from tanglerag.errors import ConfigError
from tanglerag.methods.pcas.scorers import PairScorer

RETRIEVAL_METHODS: tuple[str, ...] = ("or", "b1", "b2", "b3", "pcas")


class JointRanking(BaseModel):
    """Documents (as corpus positions) with scores, best first, and the context chosen, if any."""

    docs: list[int]
    doc_scores: list[float]
    context: int | None = None
    context_scores: list[float] | None = None


def _top(scores: np.ndarray, k: int) -> list[int]:
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return sorted(part.tolist(), key=lambda i: (-scores[i], i))


def _ranking(scores: np.ndarray, depth: int) -> JointRanking:
    top = _top(scores, depth)
    return JointRanking(docs=top, doc_scores=[float(scores[i]) for i in top])


def retrieve_or(scorer: PairScorer, question: str, gold_context: str | None, depth: int) -> JointRanking:
    query = f"{question} {gold_context}" if gold_context else question
    return _ranking(scorer.doc_scores(query), depth)


def retrieve_b1(scorer: PairScorer, question: str, contexts: list[str], depth: int) -> JointRanking:
    return _ranking(scorer.doc_scores(" ".join([question, *contexts])), depth)


def retrieve_b2(scorer: PairScorer, question: str, contexts: list[str], documents: list[str],
                depth: int) -> JointRanking:
    ranking = _ranking(scorer.doc_scores(question), depth)
    if contexts and ranking.docs:
        context_scores = scorer.text_scores(contexts, documents[ranking.docs[0]])
        ranking.context = int(np.argmax(context_scores))
        ranking.context_scores = context_scores.tolist()
    return ranking


def retrieve_b3(scorer: PairScorer, question: str, contexts: list[str], depth: int) -> JointRanking:
    if not contexts:
        return _ranking(scorer.doc_scores(question), depth)
    context_scores = scorer.text_scores(contexts, question)
    best = int(np.argmax(context_scores))
    ranking = _ranking(scorer.doc_scores(f"{question} {contexts[best]}"), depth)
    ranking.context, ranking.context_scores = best, context_scores.tolist()
    return ranking


def rank_pairs(query_scores: np.ndarray, context_scores: np.ndarray, keys: list[int], *, lam: float,
               depth: int) -> list[tuple[float, int, int]]:
    """PCAS's pair ranking, shared by the evaluation and ``ask --user``.

    ``query_scores[i]`` is s(d_i, q) and ``context_scores[c, i]`` is s(d_i, c) for the candidate documents;
    each document is paired with its best context and pairs are ranked by lambda*s(d,q) + (1-lambda)*s(d,c),
    ties by ``keys``. Returns (score, candidate position, context position), best first.
    """
    if not 0.0 <= lam <= 1.0:
        raise ConfigError(f"lambda must be in [0, 1], got {lam}")
    best = context_scores.argmax(axis=0)
    pairs = [(lam * float(query_scores[i]) + (1 - lam) * float(context_scores[best[i], i]), i, int(best[i]))
             for i in range(len(keys))]
    pairs.sort(key=lambda p: (-p[0], keys[p[1]]))
    return pairs[:depth]


def retrieve_pcas(scorer: PairScorer, question: str, contexts: list[str], *, beam: int, lam: float,
                  depth: int) -> JointRanking:
    """Rerank the top-``beam`` documents by the convex combination with their best context."""
    query_scores = scorer.doc_scores(question)
    candidates = _top(query_scores, max(beam, 1))
    if not contexts:
        return JointRanking(docs=candidates[:depth], doc_scores=[float(query_scores[i]) for i in candidates[:depth]])
    # s(d, c): each context scored as a query against the whole corpus, so BM25 keeps corpus IDF
    # and both terms of the combination live on the same scale.
    by_context = np.stack([scorer.doc_scores(c) for c in contexts])  # contexts x documents
    top = rank_pairs(query_scores[candidates], by_context[:, candidates], candidates, lam=lam, depth=depth)
    best_doc = candidates[top[0][1]]
    return JointRanking(docs=[candidates[i] for _, i, _ in top], doc_scores=[score for score, _, _ in top],
                        context=top[0][2], context_scores=by_context[:, best_doc].tolist())
