"""Embeddings kept on disk by model and text: a re-run, a resumed run, a re-index and every concurrent worker embed
each text once.

An evaluation over questions that carry their own passages embeds every passage on every run and in every process;
on a 2-core machine that is the work that stops model calls from overlapping. ``CachedEmbedder`` wraps any embedder:
it looks every text up (one SQLite file, ``embeddings.sqlite3`` in the cache folder, shared by processes through
WAL), embeds only the texts it has not seen, in one batch, and stores them. The key is the embedder's identity
(``embeddings.embedder_identity``: the model and, where a backend's vectors differ, the backend), whether vectors are
normalised and the text, so another model, backend or setting never reads a vector it did not make.
``embedding.cache=false`` (``--no-cache``) bypasses it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tanglerag.disk_store import SqliteTable
from tanglerag.embeddings import TextEmbedder, embedder_identity

FILE_NAME = "embeddings.sqlite3"


class CachedEmbedder:
    """A ``TextEmbedder`` that answers from the cache file what it can; ``hits`` and ``embedded`` count texts."""

    def __init__(self, inner: TextEmbedder, path: Path | str, normalize: bool = True) -> None:
        self.inner = inner
        self.normalize = normalize
        self._file = SqliteTable(Path(path), "vectors", "embedding cache")
        self.hits = 0
        self.embedded = 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def identity(self) -> str:
        return embedder_identity(self.inner)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def warm_up(self) -> None:
        """Load the model behind the cache (one with nothing to load, the hashing embedder, does nothing)."""
        loads = getattr(self.inner, "warm_up", None)
        if loads is not None:
            loads()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\0{self.normalize}\0{text}".encode()).hexdigest()

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        keys = [self._key(text) for text in texts]
        stored = self._file.get_many(keys)
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys, strict=True) if key not in stored))
        vectors = {key: np.frombuffer(value, dtype="float32") for key, value in stored.items()
                   if isinstance(value, bytes)}
        if missing:
            fresh = self.inner.embed(missing, show_progress=show_progress)
            made = {self._key(text): np.ascontiguousarray(row, dtype="float32") for text, row in zip(missing, fresh,
                                                                                                   strict=True)}
            self._file.put_many((key, row.tobytes()) for key, row in made.items())
            vectors.update(made)
        self.hits += len(texts) - len(missing)
        self.embedded += len(missing)
        if not texts:
            return np.zeros((0, self.dimension), dtype="float32")
        return np.stack([vectors[key] for key in keys])
