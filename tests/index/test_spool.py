"""The vector spool gives back what was appended, whole or at chosen positions, across block boundaries."""

import numpy as np

from tanglerag.index.spool import VectorSpool


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
