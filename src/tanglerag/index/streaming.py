"""Build an index from a stream of passages: each batch is embedded and written into the new version as it comes,
so memory holds one batch of passages, never the corpus. Flat and IVF-PQ park the vectors on disk and write the index
file from there (``faiss_stream``), so they never hold the corpus's vectors either; HNSW and IVF-flat hold them in
their structure (IVF-flat parks them until it has trained on a sample of the whole corpus). Crash-safe like every save:
until the manifest names the new version, the old one is the index."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.errors import IndexStoreError
from tanglerag.index.dense import add_to_trained, empty_dense, trained_ivf, training_rows
from tanglerag.index.faiss_stream import BOUNDED, write_bounded
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import PassageIndex, embed_text, faiss_disk_errors, index_lock, write_version
from tanglerag.index.passage_store import FILE as PASSAGES_FILE
from tanglerag.index.passage_store import PassageStore, StoreWriter, batched
from tanglerag.index.sparse import BM25Index
from tanglerag.index.spool import VectorSpool
from tanglerag.types import Passage

BATCH = 1024
"""Passages embedded and written at a time."""


def build_streaming(folder: Path, passages: Iterable[Passage], embedder: TextEmbedder, config: IndexConfig, *,
                    batch_size: int = BATCH, progress: Callable[[int], None] | None = None) -> PassageIndex:
    """A new index in ``folder`` (replacing the one there) from ``passages``, read once; ``progress`` hears how
    many passages each batch held."""
    with index_lock(folder):
        write_new_version(folder, passages, embedder, config, batch_size, progress)
    return PassageIndex.load(folder, embedder)


def write_new_version(folder: Path, passages: Iterable[Passage], embedder: TextEmbedder, config: IndexConfig,
                      batch_size: int, progress: Callable[[int], None] | None) -> None:
    """The streamed build itself, for a caller that already holds ``index_lock(folder)``."""
    write_version(folder, lambda data: _fill(data, passages, embedder, config, batch_size, progress))


def _fill(data: Path, passages: Iterable[Passage], embedder: TextEmbedder, config: IndexConfig, batch_size: int,
          progress: Callable[[int], None] | None) -> IndexManifest:
    with StoreWriter(data / PASSAGES_FILE) as store:
        batches = _embedded(store, passages, embedder, batch_size, progress)
        dim = _bounded(batches, config, data) if config.index_type in BOUNDED else _in_memory(batches, config, data)
        count = store.count
    if config.bm25:
        write_bm25(data)
    return IndexManifest(embedding_model=embedder_identity(embedder), dimension=dim, index_type=config.index_type,
                         count=count, bm25=config.bm25, config=config)


def _bounded(batches: Iterator[np.ndarray], config: IndexConfig, data: Path) -> int:
    """Flat and IVF-PQ: every batch parked in a spool on disk, then the index file written from it
    (``faiss_stream.write_bounded``), so memory holds a block of vectors (and IVF-PQ's sample and codes), never the
    corpus's vectors. Returns the dimension."""
    spool = VectorSpool(data / "vectors.spool")
    try:
        for vectors in batches:
            spool.append(vectors)
        if not spool.count:
            raise IndexStoreError("cannot build an index from an empty corpus")
        with faiss_disk_errors():
            write_bounded(data / "dense.faiss", spool, config)
        return spool.dim
    finally:
        spool.remove()


def _in_memory(batches: Iterator[np.ndarray], config: IndexConfig, data: Path) -> int:
    dense = dense_from(batches, config, data)
    if dense is None:
        raise IndexStoreError("cannot build an index from an empty corpus")
    with faiss_disk_errors():
        faiss.write_index(dense, str(data / "dense.faiss"))
    return int(dense.d)


def _embedded(store: StoreWriter, passages: Iterable[Passage], embedder: TextEmbedder, batch_size: int,
              progress: Callable[[int], None] | None) -> Iterator[np.ndarray]:
    """Each batch's vectors, once its passages are in the store."""
    for chunk in batched(passages, batch_size):
        vectors = embedder.embed([embed_text(p) for p in chunk])
        store.append(chunk)
        if progress is not None:
            progress(len(chunk))
        yield vectors


def dense_from(batches: Iterator[np.ndarray], config: IndexConfig, data: Path) -> faiss.Index | None:
    """Flat and HNSW take each batch as it comes; IVF types spool them to disk, then train (None: no batch)."""
    if config.index_type not in ("ivf", "ivfpq"):
        dense = None
        for vectors in batches:
            if dense is None:
                dense = empty_dense(vectors.shape[1], config)
            dense.add(vectors)
        return dense
    spool = VectorSpool(data / "vectors.spool")
    try:
        for vectors in batches:
            spool.append(vectors)
        return _trained_from(spool, config) if spool.count else None
    finally:
        spool.remove()


def _trained_from(spool: VectorSpool, config: IndexConfig) -> faiss.Index:
    """Train on a sample read back from the spool, then add every vector block by block: memory holds the
    index, the sample and one block, never a second copy of the corpus's vectors."""
    index = trained_ivf(spool.rows(training_rows(spool.count, config)), spool.count, config)
    add_to_trained(index, spool.blocks, config)
    return index


def write_bm25(data: Path) -> None:
    """BM25 statistics are corpus-wide, so its index is built from the finished store (bm25s needs every text)."""
    store = PassageStore(data / PASSAGES_FILE)
    try:
        bm25 = BM25Index.build([embed_text(p) for p in store])
    finally:
        store.close()
    (data / "bm25").mkdir()
    bm25.save(data / "bm25")
