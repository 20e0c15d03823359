"""Cut and restore links of a faiss HNSW graph in place (CDIT's index trimming, paper 003).

faiss keeps every node's neighbour lists in one int32 array: node ``i`` owns
``neighbors[offsets[i]:offsets[i+1]]``, level ``l`` is the slice ``[cum[l], cum[l+1])`` of it, for the
``levels[i]`` levels the node lives on, and a list ends at its first -1. So a cut removes the neighbour
and shifts the rest of the list left, padding with -1 at the end: a -1 left in the middle would hide
every neighbour after it from the search. Links are directed; a cut removes both directions on every
level where they exist and returns exactly what it removed, so ``restore`` can put it back.

>>> removed = cut_link(index, 12, 40)  # doctest: +SKIP
>>> restore_links(index, removed)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import faiss
import numpy as np

from tanglerag.errors import IndexStoreError


@dataclass(frozen=True)
class RemovedLink:
    """``source`` no longer lists ``target`` on ``level``."""

    source: int
    target: int
    level: int


class _Graph:
    def __init__(self, index: faiss.Index) -> None:
        if not isinstance(index, faiss.IndexHNSW):
            raise IndexStoreError(f"links can be cut only in an HNSW index, not {type(index).__name__}")
        hnsw = index.hnsw
        # faiss's stubs do not list the HNSW graph's SWIG vectors
        self.neighbors = faiss.rev_swig_ptr(hnsw.neighbors.data(), hnsw.neighbors.size())  # type: ignore[attr-defined]
        self.offsets = faiss.vector_to_array(hnsw.offsets)  # type: ignore[attr-defined]
        self.levels = faiss.vector_to_array(hnsw.levels)
        self.cum = faiss.vector_to_array(hnsw.cum_nneighbor_per_level)
        self.n = index.ntotal

    def slot_range(self, node: int, level: int) -> tuple[int, int]:
        start = int(self.offsets[node])
        return start + int(self.cum[level]), start + int(self.cum[level + 1])

    def shared_levels(self, a: int, b: int) -> range:
        for node in (a, b):
            if not 0 <= node < self.n:
                raise IndexStoreError(f"no vector {node} in this index ({self.n} vectors)")
        return range(min(int(self.levels[a]), int(self.levels[b])))

    def remove(self, source: int, target: int, level: int) -> bool:
        lo, hi = self.slot_range(source, level)
        row = self.neighbors[lo:hi]
        hits = np.flatnonzero(row == target)
        if not len(hits):
            return False
        kept = row[(row != target) & (row != -1)]
        row[:] = -1
        row[:len(kept)] = kept
        return True

    def add(self, source: int, target: int, level: int) -> bool:
        lo, hi = self.slot_range(source, level)
        row = self.neighbors[lo:hi]
        if (row == target).any():
            return True
        free = np.flatnonzero(row == -1)
        if not len(free):
            return False  # the list filled up since the cut (e.g. refilled): nothing to restore into
        row[free[0]] = target
        return True


def cut_link(index: faiss.Index, a: int, b: int) -> list[RemovedLink]:
    """Remove the links a->b and b->a on every level; what was removed (empty if they were not linked)."""
    return cut_links(index, [(a, b)])


def cut_links(index: faiss.Index, pairs: list[tuple[int, int]]) -> list[RemovedLink]:
    """``cut_link`` for many pairs, reading the graph's layout once."""
    graph = _Graph(index)
    removed = []
    for a, b in pairs:
        for level in graph.shared_levels(a, b):
            for source, target in ((a, b), (b, a)):
                if graph.remove(source, target, level):
                    removed.append(RemovedLink(source, target, level))
    return removed


def restore_links(index: faiss.Index, removed: list[RemovedLink]) -> int:
    """Put removed links back where their list has room; how many were restored."""
    graph = _Graph(index)
    return sum(graph.add(link.source, link.target, link.level) for link in removed)


def linked(index: faiss.Index, a: int, b: int) -> bool:
    """Whether a lists b or b lists a on any level."""
    graph = _Graph(index)
    for level in graph.shared_levels(a, b):
        for source, target in ((a, b), (b, a)):
            lo, hi = graph.slot_range(source, level)
            if (graph.neighbors[lo:hi] == target).any():
                return True
    return False


def edges(index: faiss.Index, level: int = 0) -> np.ndarray:
    """All directed links on ``level`` as an (m, 2) array of (source, target) vector numbers."""
    graph = _Graph(index)
    pairs = []
    for node in range(graph.n):
        if int(graph.levels[node]) <= level:
            continue
        lo, hi = graph.slot_range(node, level)
        row = graph.neighbors[lo:hi]
        row = row[row >= 0]
        pairs.append(np.stack([np.full(len(row), node), row], axis=1))
    return np.concatenate(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
