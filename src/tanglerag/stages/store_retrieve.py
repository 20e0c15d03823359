"""Retrieval from a vector store: the question embedded with the runtime's embedder, the store searched with
``retrieval.where`` pushed down as the store's own filter.

``retrieval.mode`` bm25 and hybrid need a store with the ``sparse`` capability (the embedded index, its own
retriever; PostgreSQL's full-text search, ``TextSearch``), refused by the runtime before this is built for a store
without it (``stores.registry.require``). A filter the store cannot
express is the asker's to change (an InputError: a 400 from the service); the store failing is a StoreError (503).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from tanglerag.config import RetrievalConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.index.fusion import reciprocal_rank_fusion
from tanglerag.stages.retrieve import Retrieval, above_floor, floor_for
from tanglerag.stores.base import StoredHit, TextSearch, VectorStore
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
        hits = self._ranked(question.text, k or self.config.top_k)
        return Retrieval(passages=above_floor([RetrievedPassage(passage=h.passage, score=h.score, rank=rank)
                                               for rank, h in enumerate(hits, 1)],
                                               floor_for(self.config, self.embedder)))

    def _ranked(self, text: str, k: int) -> list[StoredHit]:
        """The store's dense ranking, its full-text one (``bm25``: a store declaring ``sparse`` has ``text_search``),
        or both fused by reciprocal rank as the embedded index fuses them (``hybrid``, each read 4k deep)."""
        mode = self.config.mode
        if mode == "bm25":
            return cast(TextSearch, self.store).text_search(text, k, self.where)
        vector = self.embedder.embed([text])[0]
        if mode == "dense":
            return self.store.search(vector, k, self.where)
        depth = max(4 * k, 20)
        dense = self.store.search(vector, depth, self.where)
        sparse = cast(TextSearch, self.store).text_search(text, depth, self.where)
        held = {h.passage.id: h.passage for h in [*dense, *sparse]}
        fused = reciprocal_rank_fusion([[h.passage.id for h in dense], [h.passage.id for h in sparse]],
                                       self.config.rrf_k)
        return [StoredHit(passage=held[pid], score=score) for pid, score in fused[:k]]
