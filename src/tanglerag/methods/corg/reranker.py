"""Reranker: turn the context graph into groups to answer separately.

Following the paper's per-relation findings: a descriptor-less context interchangeable with a
descriptor-bearing one is dropped (the answer stays, the ambiguity goes); one context of each
duplicate set is kept; contexts that contradict each other never share a group; the rest are
spread evenly over the groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from tanglerag.methods.corg.graph import ContextGraph, Relation


@dataclass(frozen=True)
class Dropped:
    context: int  # 0-based position in the graph
    reason: str  # "ambiguous" | "duplicate"
    kept_instead: int


@dataclass
class Organized:
    groups: list[list[int]]
    dropped: list[Dropped] = field(default_factory=list)
    conflicts: list[tuple[int, int]] = field(default_factory=list)  # kept contexts labelled counterfactual


def _descriptor_less(graph: ContextGraph, i: int, j: int) -> int:
    """Which of an ambiguous pair lacks the descriptor.

    Extract mode knows. From relations alone: a context with a descriptor is 'distracting' to
    other descriptor-bearing ones, a descriptor-less one never is; ties drop the later context.
    """
    known_i, known_j = graph.has_descriptor(i), graph.has_descriptor(j)
    if known_i is not None and known_j is not None and known_i != known_j:
        return j if known_i else i
    distracting_i = any(r is Relation.DISTRACTING for _, r in graph.edges_of(i))
    distracting_j = any(r is Relation.DISTRACTING for _, r in graph.edges_of(j))
    if distracting_i != distracting_j:
        return j if distracting_i else i
    return max(i, j)


def organize(graph: ContextGraph) -> Organized:
    kept = set(range(graph.size))
    dropped: list[Dropped] = []
    for i, j in graph.pairs(Relation.AMBIGUOUS):
        if i in kept and j in kept:
            loser = _descriptor_less(graph, i, j)
            kept.discard(loser)
            # interchangeable with a context that has a descriptor: the answer stays, the ambiguity goes
            dropped.append(Dropped(loser, "ambiguous", j if loser == i else i))
    duplicates = nx.Graph()
    duplicates.add_nodes_from(kept)
    duplicates.add_edges_from((i, j) for i, j in graph.pairs(Relation.DUPLICATED) if i in kept and j in kept)
    for component in nx.connected_components(duplicates):
        for extra in sorted(component)[1:]:  # keep the best-ranked copy
            kept.discard(extra)
            dropped.append(Dropped(extra, "duplicate", min(component)))
    conflicting = [(i, j) for i, j in graph.pairs(Relation.COUNTERFACTUAL) if i in kept and j in kept]
    conflicts = nx.Graph(conflicting)
    colors = nx.greedy_color(conflicts, strategy="largest_first") if conflicts.number_of_nodes() else {}
    groups: list[list[int]] = [[] for _ in range(max(colors.values(), default=0) + 1)]
    for node in sorted(colors):
        groups[colors[node]].append(node)
    for node in sorted(kept - set(colors)):
        min(groups, key=len).append(node)  # fill the smallest group first: an even spread
    return Organized(groups=[sorted(g) for g in groups if g], dropped=dropped, conflicts=conflicting)
