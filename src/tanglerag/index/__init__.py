"""Persistent passage index: Faiss (flat / HNSW / IVF / IVF-PQ, memory-mapped on request), optional BM25, hybrid by
RRF, passages in SQLite; built in memory or streamed (``streaming.build_streaming``)."""

from tanglerag.errors import IndexStoreError
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import PassageIndex

__all__ = ["IndexManifest", "IndexStoreError", "PassageIndex"]
