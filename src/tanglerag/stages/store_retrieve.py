"""Retrieval from a vector store searched by its vectors: the question embedded with the runtime's embedder, the
store searched with ``retrieval.where`` pushed down as the store's own filter.

Dense search: ``retrieval.mode`` bm25 and hybrid need a store with the ``sparse`` capability (the embedded index, its
own retriever), refused by the runtime before this is built (``stores.registry.require``). A filter the store cannot
express is the asker's to change (an InputError: a 400 from the service); the store failing is a StoreError (503).
"""

from __future__ import annotations

from collections.abc import Mapping

from tanglerag.config import RetrievalConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.stages.retrieve import Retrieval, above_floor, floor_for
from tanglerag.stores.base import VectorStore
from tanglerag.types import Question, RetrievedPassage
from tanglerag.where import parse_where


class StoreRetriever:
    """Searches ``store`` for a question's ``k`` closest passages among those passing ``config.where``."""

    def __init__(self, store: VectorStore, embedder: TextEmbedder, config: RetrievalConfig | None = None,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> None:
        """A where that cannot be read with ``tiers`` is an InputError here, before any search."""
        self.store = store
        self.embedder = embedder
        self.config = config or RetrievalConfig()
        self.where = parse_where(self.config.where, tiers)
        self._where_checked = self.where is None

    def retrieve(self, question: Question, k: int | None = None) -> Retrieval:
        if not self._where_checked and self.where is not None:  # asked of the store once per filter
            refused = self.store.unsupported(self.where)
            if refused is not None:
                raise InputError(refused)
            self._where_checked = True
        vector = self.embedder.embed([question.text])[0]
        hits = self.store.search(vector, k or self.config.top_k, self.where)
        return Retrieval(passages=above_floor([RetrievedPassage(passage=h.passage, score=h.score, rank=rank)
                                               for rank, h in enumerate(hits, 1)],
                                               floor_for(self.config, self.embedder)))
