"""Vectors parked on disk while a streamed build runs: an IVF index trains on a sample of the whole corpus before
it can take any vector, so a build that held them in RAM until then would need the corpus's vectors at once
(32 GB at 21M passages). The spool is read back in blocks with plain reads rather than a memory map, so the pages
it reads do not count against the process."""

from __future__ import annotations

from collections.abc import Iterator
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
        picked, start = [], 0
        for block in self.blocks(size):
            inside = positions[(positions >= start) & (positions < start + len(block))]
            picked.append(block[inside - start])
            start += len(block)
        return np.vstack(picked) if picked else np.zeros((0, self.dim), dtype="float32")

    def remove(self) -> None:
        self._out.close()
        self.path.unlink(missing_ok=True)
