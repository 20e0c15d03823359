"""Write faiss index files whose vectors are streamed from disk, never held: the streamed build and the build from
shards of a flat index and of an IVF-PQ index with exact re-ranking (issue 53, item 2).

faiss writes an index from memory, so a flat index, or IVF-PQ's re-ranking copy of the vectors, once needed all the
corpus's vectors in RAM while it was built (32 GB at 21M passages). Both hold them as one plain float32 array in the
file (``IndexFlat``'s codes), so the file can be written piece by piece: faiss's own bytes for everything that is
not the vectors (an empty flat index's header with the count filled in, IVF-PQ's codes and lists, which are small),
then the vectors block by block. The result is the file ``faiss.write_index`` would write, byte for byte (tested), read
as usual and memory-mapped when served with ``index.mmap``.
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.index.dense import trained_ivf, training_rows

BOUNDED = ("flat", "ivfpq")
"""Index types whose file is written from vectors on disk (``write_bounded``); hnsw and ivf hold every vector in
their structure, so they are built in memory."""

NTOTAL = slice(8, 16)
"""Where an index header holds its vector count: after the 4-byte type tag and the 4-byte dimension."""
HEADER = 37
"""Type tag, dimension, count, two reserved counts, trained flag, metric: an inner-product index's header."""


def _header(index: faiss.Index, count: int) -> bytes:
    """``index``'s own header bytes (an empty index of the right type) with ``count`` vectors."""
    head = bytearray(faiss.serialize_index(index).tobytes()[:HEADER])
    head[NTOTAL] = struct.pack("<q", count)
    return bytes(head)


def _flat_part(dim: int, count: int) -> bytes:
    """An inner-product flat index's header and the length of its vector array (in floats), which follow."""
    return _header(faiss.IndexFlatIP(dim), count) + struct.pack("<Q", count * dim)


def _vectors(fh: object, blocks: Iterable[np.ndarray], dim: int, count: int) -> None:
    written = 0
    for block in blocks:
        if block.ndim != 2 or block.shape[1] != dim:
            raise ValueError(f"a block of shape {block.shape} for {dim}-d vectors")
        fh.write(np.ascontiguousarray(block, dtype="<f4").data)  # type: ignore[attr-defined]  # no copy
        written += len(block)
    if written != count:
        raise ValueError(f"{written} vectors written, {count} announced")


def write_flat(path: Path, dim: int, count: int, blocks: Callable[[], Iterable[np.ndarray]]) -> None:
    """A flat inner-product index of ``count`` vectors, written from ``blocks`` (memory: one block)."""
    with path.open("wb") as fh:
        fh.write(_flat_part(dim, count))
        _vectors(fh, blocks(), dim, count)


def write_refined(path: Path, base: faiss.Index, k_factor: float, blocks: Callable[[], Iterable[np.ndarray]]) -> None:
    """An ``IndexRefineFlat`` over ``base`` (an IVF-PQ index already holding every vector's code) whose exact vectors,
    for re-ranking, are written from ``blocks`` in the order the codes were added (memory: the codes and one block)."""
    count, dim = base.ntotal, base.d
    with path.open("wb") as fh:
        inner = faiss.IndexFlatIP(dim)  # named: the wrapper does not keep it alive
        fh.write(_header(faiss.IndexRefineFlat(inner), count))
        base_file = path.with_name(path.name + ".base")
        try:
            faiss.write_index(base, str(base_file))
            with base_file.open("rb") as base_bytes:
                shutil.copyfileobj(base_bytes, fh, 1 << 24)
        finally:
            base_file.unlink(missing_ok=True)
        fh.write(_flat_part(dim, count))
        _vectors(fh, blocks(), dim, count)
        fh.write(struct.pack("<f", k_factor))


class VectorSource(Protocol):
    """Vectors parked on disk (a build's spool, embedded shards): how many, their dimension, the rows at chosen
    positions, and all of them in order a block at a time."""

    @property
    def count(self) -> int: ...

    @property
    def dim(self) -> int: ...

    def rows(self, positions: np.ndarray) -> np.ndarray: ...

    def blocks(self) -> Iterator[np.ndarray]: ...


def write_bounded(path: Path, vectors: VectorSource, config: IndexConfig) -> None:
    """The ``config.index_type`` index (one of ``BOUNDED``) of ``vectors`` written to ``path``: flat straight from the
    blocks; IVF-PQ trained on the rows the in-memory build samples, its codes added block by block, then its file
    written with the exact vectors streamed from the blocks (codes only with ``index.pq_refine=0``)."""
    if config.index_type == "flat":
        write_flat(path, vectors.dim, vectors.count, vectors.blocks)
        return
    if config.index_type != "ivfpq":
        raise ValueError(f"{config.index_type} indexes are built in memory")
    index = trained_ivf(vectors.rows(training_rows(vectors.count, config)), vectors.count, config)
    base = faiss.downcast_index(index.base_index) if isinstance(index, faiss.IndexRefine) else index
    for block in vectors.blocks():
        base.add(np.ascontiguousarray(block, dtype="float32"))
    if base is index:
        faiss.write_index(index, str(path))
    else:
        write_refined(path, base, float(max(1, config.pq_refine)), vectors.blocks)
