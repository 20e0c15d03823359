"""Vectors parked on disk while a streamed build runs: an IVF index trains on a sample of the whole corpus before
it can take any vector, so a build that held them in RAM until then would need the corpus's vectors at once
(32 GB at 21M passages). The spool is read back in blocks with plain reads rather than a memory map, so the pages
it reads do not count against the process."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

BLOCK = 65_536
"""Vectors read back at a time (96 MB at 384 dimensions)."""


class VectorSpool:
    """Float32 rows appended to a scratch file, then read back in order, whole or at chosen positions."""

    def __init__(self, path: Path) -> None:
        self.path, self.count, self.dim = path, 0, 0
        self._out = path.open("wb")

    def append(self, vectors: np.ndarray) -> None:
        self.dim = vectors.shape[1]
        np.ascontiguousarray(vectors, dtype="float32").tofile(self._out)
        self.count += len(vectors)

    def blocks(self, size: int = BLOCK) -> Iterator[np.ndarray]:
        """Every row, ``size`` at a time."""
        self._out.close()
        with self.path.open("rb") as fh:
            for _ in range(0, self.count, size):
                yield np.fromfile(fh, dtype="float32", count=size * self.dim).reshape(-1, self.dim)

    def rows(self, positions: np.ndarray, size: int = BLOCK) -> np.ndarray:
        """The rows at ``positions`` (sorted), gathered block by block."""
        return gather_rows(positions, self.blocks(size), self.dim)

    def remove(self) -> None:
        self._out.close()
        self.path.unlink(missing_ok=True)


def gather_rows(positions: np.ndarray, parts: Iterable[np.ndarray], dim: int) -> np.ndarray:
    """The rows at ``positions`` (sorted) of the matrix that ``parts`` make one after another, copied into one array
    made up front: pieces joined at the end held the rows twice at once, and they are an IVF index's training
    sample (64 rows a list, 1.8 GB at 21M passages), the largest thing a bounded build holds."""
    out = np.empty((len(positions), dim), dtype="float32")
    done = start = 0
    for part in parts:
        mine = positions[done:np.searchsorted(positions, start + len(part))] - start
        out[done:done + len(mine)] = part[mine]
        done, start = done + len(mine), start + len(part)
    return out
