"""The vector spool gives back what was appended, whole or at chosen positions, across block boundaries."""

import tracemalloc

import numpy as np

from tanglerag.index.spool import VectorSpool, gather_rows


def test_rows_come_back_in_order_whole_and_picked(tmp_path):
    vectors = np.random.default_rng(1).random((23, 4), dtype="float32")
    spool = VectorSpool(tmp_path / "v.spool")
    for start in range(0, 23, 5):
        spool.append(vectors[start:start + 5])
    assert spool.count == 23 and spool.dim == 4
    assert np.array_equal(np.vstack(list(spool.blocks(size=7))), vectors)
    picked = np.array([0, 6, 7, 13, 22])  # first, both sides of a block edge, last
    assert np.array_equal(spool.rows(picked, size=7), vectors[picked])
    spool.remove()
    assert not (tmp_path / "v.spool").exists()


def test_gathered_rows_are_held_once():
    # the rows are an IVF index's training sample, the largest thing a bounded build holds: pieces joined at the
    # end held it twice
    parts = [np.random.default_rng(seed).random((1000, 64), dtype="float32") for seed in range(4)]
    picked = np.arange(0, 4000, 2)
    tracemalloc.start()
    rows = gather_rows(picked, iter(parts), 64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.array_equal(rows, np.vstack(parts)[picked])
    assert peak < 1.5 * rows.nbytes
