"""Persistent passage index: Faiss (flat / HNSW / IVF), optional BM25, hybrid by RRF."""

from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import IndexStoreError, PassageIndex

__all__ = ["IndexManifest", "IndexStoreError", "PassageIndex"]
