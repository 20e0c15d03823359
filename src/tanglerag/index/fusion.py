"""Reciprocal rank fusion of several rankings."""

from __future__ import annotations

from typing import TypeVar

Id = TypeVar("Id", int, str)


def reciprocal_rank_fusion(rankings: list[list[Id]], k: int = 60) -> list[tuple[Id, float]]:
    """Fuse ranked lists of ids (positions in an index, or a store's passage ids); an id scores sum(1 / (k + rank)),
    rank starting at 1; ties in id order."""
    scores: dict[Id, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
