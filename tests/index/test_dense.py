"""IVF sizing: a seeded training sample of the corpus, and the lists a search probes growing with the lists."""

import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.index.dense import SAMPLE_PER_LIST, build_dense, ivf_nprobe, training_rows


def test_ivf_trains_on_a_seeded_sample_once_the_corpus_outgrows_it():
    config = IndexConfig(index_type="ivf", ivf_nlist=10)
    rows = training_rows(5_000, config)
    assert len(rows) == 10 * SAMPLE_PER_LIST and len(set(rows.tolist())) == len(rows)
    assert np.all(np.diff(rows) > 0) and rows[-1] < 5_000
    assert np.array_equal(rows, training_rows(5_000, config))  # the streamed and in-memory builds agree
    assert np.array_equal(training_rows(600, config), np.arange(600))  # fewer than the sample: all of them
    pq = IndexConfig(index_type="ivfpq", ivf_nlist=10, pq_nbits=6)
    assert len(training_rows(5_000, pq)) == 39 * 2 ** 6  # the codes need more than the lists


def test_nprobe_is_a_share_of_the_lists_unless_set():
    assert ivf_nprobe(4_000, 0) == 40 and ivf_nprobe(100, 0) == 8 and ivf_nprobe(5, 0) == 5
    assert ivf_nprobe(4_000, 3) == 3
    vectors = np.random.default_rng(2).random((2_000, 8), dtype="float32")
    index = build_dense(vectors, IndexConfig(index_type="ivf", ivf_nlist=20))
    assert index.nprobe == 8 and index.ntotal == 2_000
