"""The embedded faiss + SQLite index (``PassageIndex``) behind the store contract: the default, unchanged.

A search is the index's own: ranked by faiss, filtered by ``Where.matches`` on each candidate's stored metadata, the
ranking read deeper until ``k`` pass, CDIT's separations applied. The contract hands a query vector rather than a
text, so the search runs on a shallow view of the loaded index whose embedder returns that vector; everything else
(passages, faiss index, trim state) is the index's, not a copy. ``unsupported`` is always None: the filter runs in
Python and reads every condition.

A write loads the index under its lock, drops the passages replaced, adds the new ones with their vectors and saves a
new version (crash-safe, as every save of the index: all of a call or none of it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import IndexStoreError
from tanglerag.index.dense import build_dense
from tanglerag.index.passage_index import PassageIndex, embed_text, index_lock, read_manifest
from tanglerag.index.passage_store import PassageStore
from tanglerag.index.sparse import BM25Index
from tanglerag.settings import Settings
from tanglerag.stores.base import Capabilities, StoredHit, StoreError, ThreadedSearch
from tanglerag.types import Passage
from tanglerag.where import Where

T = TypeVar("T")
_QUERY = "(query vector)"
"""The text a view's search is given: its embedder ignores it and returns the contract's vector."""


class _GivenVector:
    """An embedder that returns one vector whatever it is asked: how a vector reaches the index's own search."""

    def __init__(self, embedder: TextEmbedder, vector: np.ndarray) -> None:
        self._embedder, self._vector = embedder, vector.reshape(1, -1)

    @property
    def model_name(self) -> str:
        return self._embedder.model_name

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        return self._vector


class EmbeddedStore(ThreadedSearch):
    """The index in ``folder`` as a store; ``embedder`` names its vectors in the manifest (and loads it)."""

    name: ClassVar[str] = "embedded"
    capabilities: ClassVar[Capabilities] = Capabilities(index_folder=True, sparse=True, separations=True,
                                                        personal=True, every_filter=True)

    def __init__(self, folder: Path, embedder: TextEmbedder, config: IndexConfig | None = None) -> None:
        self.folder = folder
        self.embedder = embedder
        self.config = config or IndexConfig()
        self._index: PassageIndex | None = None

    @classmethod
    def from_settings(cls, settings: Settings, embedder: TextEmbedder, index_dir: Path | None) -> EmbeddedStore:
        if index_dir is None:
            raise StoreError("store.backend=embedded reads the index folder given with --index")
        return cls(index_dir, embedder, settings.index)

    def _exists(self) -> bool:
        return (self.folder / "manifest.json").exists()

    def loaded(self) -> PassageIndex:
        """The loaded index (StoreError when the folder holds none)."""
        if self._index is None:
            if not self._exists():
                raise StoreError(f"embedded store: {self.folder} holds no index yet; build one with `tanglerag index`")
            self._index = _loading(lambda: PassageIndex.load(self.folder, self.embedder))
        return self._index

    def written_by(self) -> str | None:
        return _loading(lambda: read_manifest(self.folder).embedding_model) if self._exists() else None

    def dimension(self) -> int | None:
        return _loading(lambda: read_manifest(self.folder).dimension) if self._exists() else None

    def count(self) -> int:
        return len(self.loaded().passages) if self._exists() else 0

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        if len(passages) != len(vectors):
            raise StoreError(f"embedded store: {len(passages)} passages but {len(vectors)} vectors")
        if vectors.ndim != 2 or vectors.shape[1] != self.embedder.dimension:
            raise StoreError(f"embedded store: vectors of {vectors.shape[-1]} dimensions, but the embedder "
                             f"{self.embedder.model_name!r} makes {self.embedder.dimension}")
        fresh = dict(zip((p.id for p in passages), zip(passages, _unit_rows(vectors), strict=True), strict=True))
        with index_lock(self.folder):
            current = PassageIndex.load(self.folder, self.embedder) if self._exists() else None
            keep = [p for p in (current.passages if current else []) if p.id not in fresh]
            kept = current.vectors([p.id for p in keep]) if current and keep else np.zeros((0, vectors.shape[1]))
            self._write([*keep, *(p for p, _ in fresh.values())],
                        np.vstack([kept, np.stack([v for _, v in fresh.values()])]).astype("float32"), current)

    def _write(self, passages: list[Passage], vectors: np.ndarray, current: PassageIndex | None) -> None:
        """Save a new version holding ``passages`` (a faiss index cannot replace entries in place: it is rebuilt
        from the stored vectors, as the index's own removal does); CDIT's separations carry over."""
        config = current.config if current else self.config
        bm25 = BM25Index.build([embed_text(p) for p in passages]) if config.bm25 else None
        index = PassageIndex(passages, build_dense(vectors, config), self.embedder, config, bm25)
        if current is not None:
            index.apply_trim(current.trim)
        _loading(lambda: index.save(self.folder))
        self.close()

    def delete(self, ids: Sequence[str]) -> None:
        if not self._exists():
            return
        with index_lock(self.folder):
            index = PassageIndex.load(self.folder, self.embedder)
            if _loading(lambda: index.remove(set(ids))):
                index.save(self.folder)
        self.close()

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        if self._exists():
            yield from ((p.id, dict(p.metadata)) for p in self.loaded().passages)

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        view = copy.copy(self.loaded())
        view.embedder = _GivenVector(self.embedder, _unit_rows(vector.reshape(1, -1).astype("float32")))
        hits = view.search(_QUERY, k, "dense", where=where)
        return [StoredHit(passage=hit.passage, score=hit.score) for hit in hits]

    def unsupported(self, where: Where) -> str | None:
        return None

    def close(self) -> None:
        if self._index is not None and isinstance(self._index.passages, PassageStore):
            self._index.passages.close()
        self._index = None


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1, so inner product is cosine (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype("float32")


def _loading(read: Callable[[], T]) -> T:
    """``read()``, with the index's own errors (missing, damaged, another embedder) as the store's."""
    try:
        return read()
    except IndexStoreError as exc:
        raise StoreError(f"embedded store: {exc}") from exc
