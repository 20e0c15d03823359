"""The retrieval stage: a query in, ranked passages out."""

from __future__ import annotations

from typing import Protocol

from tanglerag.config import RetrievalConfig
from tanglerag.index.passage_index import PassageIndex
from tanglerag.types import RetrievedPassage


class Retriever(Protocol):
    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]: ...


class IndexRetriever:
    """Searches a PassageIndex with the configured mode (dense, bm25, hybrid)."""

    def __init__(self, index: PassageIndex, config: RetrievalConfig | None = None) -> None:
        self.index = index
        self.config = config or RetrievalConfig()

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return self.index.search(query, k or self.config.top_k, self.config.mode, self.config.rrf_k)
