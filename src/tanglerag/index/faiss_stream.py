"""Write faiss index files whose vectors are streamed from disk, never held: the build from shards of a flat index and
of an IVF-PQ index with exact re-ranking (issue 53, item 2).

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
from collections.abc import Callable, Iterable
from pathlib import Path

import faiss
import numpy as np

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
        fh.write(np.ascontiguousarray(block, dtype="<f4").tobytes())  # type: ignore[attr-defined]
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
