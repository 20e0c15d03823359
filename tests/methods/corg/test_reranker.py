from tanglerag.methods.corg.graph import ContextGraph, Relation
from tanglerag.methods.corg.reranker import Dropped, organize


def graph_of(n, edges, descriptors=None):
    graph = ContextGraph.empty([f"d{i}" for i in range(n)], "extract" if descriptors else "pairwise")
    for i in range(n):
        for j in range(i + 1, n):
            graph.set(i, j, Relation.NONE, "llm")
    for (i, j), relation in edges.items():
        graph.set(i, j, relation, "llm")
    for i, has in enumerate(descriptors or []):
        graph.graph.nodes[i]["has_descriptor"] = has
    return graph


def test_duplicates_collapse_and_counterfactuals_split():
    graph = graph_of(5, {(0, 1): Relation.DUPLICATED, (0, 2): Relation.COUNTERFACTUAL,
                         (1, 2): Relation.COUNTERFACTUAL, (0, 3): Relation.DISTRACTING})
    organized = organize(graph)
    assert organized.dropped == [Dropped(1, "duplicate", kept_instead=0)]
    assert len(organized.groups) == 2
    group_of = {i: g for g, members in enumerate(organized.groups) for i in members}
    assert group_of[0] != group_of[2]
    assert sorted(len(g) for g in organized.groups) == [2, 2]  # 3 and 4 spread evenly


def test_ambiguous_drops_the_context_without_descriptor():
    # pairwise: 1 has distracting edges, so it is the one with a descriptor; 0 goes
    graph = graph_of(3, {(0, 1): Relation.AMBIGUOUS, (1, 2): Relation.DISTRACTING})
    assert organize(graph).dropped == [Dropped(0, "ambiguous", kept_instead=1)]
    # extract mode knows who has the descriptor
    graph = graph_of(2, {(0, 1): Relation.AMBIGUOUS}, descriptors=[True, False])
    organized = organize(graph)
    assert [d.context for d in organized.dropped] == [1] and organized.groups == [[0]]


def test_no_conflicts_means_one_group():
    assert organize(graph_of(3, {})).groups == [[0, 1, 2]]
