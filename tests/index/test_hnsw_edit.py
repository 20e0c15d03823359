import faiss
import numpy as np
import pytest

from tanglerag.errors import IndexStoreError
from tanglerag.index.hnsw_edit import cut_link, edges, linked, restore_links


@pytest.fixture
def hnsw():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 16)).astype("float32")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = faiss.IndexHNSWFlat(16, 8, faiss.METRIC_INNER_PRODUCT)
    index.add(x)
    return index, x


def _lists_are_packed(index) -> bool:
    """No -1 before a real neighbour inside any level's list (faiss stops at the first -1)."""
    h = index.hnsw
    nb = faiss.vector_to_array(h.neighbors)
    off, lv, cum = (faiss.vector_to_array(v).astype(np.int64) for v in (h.offsets, h.levels, h.cum_nneighbor_per_level))
    for node in range(index.ntotal):
        for level in range(lv[node]):
            row = nb[off[node] + cum[level]: off[node] + cum[level + 1]]
            pad = np.flatnonzero(row == -1)
            if len(pad) and (row[pad[0]:] != -1).any():
                return False
    return True


def test_cut_removes_both_directions_keeps_lists_packed_and_restores(hnsw):
    index, x = hnsw
    a, b = (int(v) for v in edges(index)[5])
    assert linked(index, a, b)
    removed = cut_link(index, a, b)
    assert removed and {(r.source, r.target) for r in removed} <= {(a, b), (b, a)}
    assert not linked(index, a, b) and _lists_are_packed(index)
    assert cut_link(index, a, b) == []  # nothing left to cut
    _, found = index.search(x[:20], 5)
    assert (found >= 0).all()  # the graph still searches
    assert restore_links(index, removed) == len(removed) and linked(index, a, b)


def test_only_hnsw_indexes_and_known_vectors(hnsw):
    index, _ = hnsw
    with pytest.raises(IndexStoreError, match="HNSW"):
        cut_link(faiss.IndexFlatIP(16), 0, 1)
    with pytest.raises(IndexStoreError, match="no vector 999"):
        cut_link(index, 0, 999)
