"""Pairwise relevance scores among query, documents and contexts, for dense and BM25 retrieval.

PCAS and its baselines need s(d,q), s(c,q), s(c,d) and s(d,c). With dense embeddings all are
cosine similarities; with BM25 the first text is scored as a document against the second as a query.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tanglerag.embeddings import TextEmbedder
from tanglerag.index.sparse import import_bm25s


class PairScorer(Protocol):
    name: str

    def doc_scores(self, query: str) -> np.ndarray:
        """s(d, query) for every document of the corpus, in corpus order."""

    def text_scores(self, items: list[str], query: str) -> np.ndarray:
        """s(item, query) for a small set of texts (contexts, or a few documents)."""

    def reset(self) -> None:
        """Forget per-query work (embeddings, small indexes) so the next timing starts cold."""


class DenseScorer:
    name = "dense"

    def __init__(self, embedder: TextEmbedder, documents: list[str]) -> None:
        self.embedder = embedder
        self.doc_vectors = embedder.embed(documents)
        self._cache: dict[str, np.ndarray] = {}

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Embed what is not cached yet in one batch (a query's contexts arrive together)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._cache.update(zip(missing, self.embedder.embed(missing), strict=True))
        return np.stack([self._cache[t] for t in texts])

    def _vec(self, text: str) -> np.ndarray:
        return np.asarray(self._vectors([text])[0])

    def reset(self) -> None:
        self._cache.clear()

    def doc_scores(self, query: str) -> np.ndarray:
        return np.asarray(self.doc_vectors @ self._vec(query))

    def text_scores(self, items: list[str], query: str) -> np.ndarray:
        if not items:
            return np.zeros(0, dtype="float32")
        return np.asarray(self._vectors(items) @ self._vec(query))


class BM25Scorer:
    name = "bm25"

    def __init__(self, documents: list[str]) -> None:
        self._docs = _BM25(documents)
        self._small: dict[tuple[str, ...], _BM25] = {}

    def reset(self) -> None:
        self._small.clear()

    def doc_scores(self, query: str) -> np.ndarray:
        return self._docs.scores(query)

    def text_scores(self, items: list[str], query: str) -> np.ndarray:
        if not items:
            return np.zeros(0, dtype="float32")
        key = tuple(items)
        if key not in self._small:
            self._small[key] = _BM25(items)
        return self._small[key].scores(query)


class _BM25:
    """bm25s is imported on first use, as in ``index.sparse`` (it costs start-up time to everyone else)."""

    def __init__(self, texts: list[str]) -> None:
        bm25s = self._bm25s = import_bm25s()
        self.size = len(texts)
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
        if not tokens:
            return np.zeros(self.size, dtype="float32")
        return np.asarray(self.model.get_scores(tokens), dtype="float32")
