"""IVF sizing: a seeded training sample of the corpus, lists allocated at their final size, and the lists a search
probes growing with the lists."""

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.index.dense import SAMPLE_PER_LIST, add_presized, build_dense, ivf_nprobe, trained_ivf, training_rows


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


def test_presized_lists_hold_what_index_add_puts_in_them():
    vectors = np.random.default_rng(3).random((3_000, 8), dtype="float32")
    config = IndexConfig(index_type="ivf", ivf_nlist=16)
    grown, presized = (trained_ivf(vectors[:1_000], 3_000, config) for _ in range(2))
    grown.add(vectors)
    add_presized(presized, lambda: (vectors[start:start + 700] for start in range(0, 3_000, 700)))
    assert presized.ntotal == 3_000
    for list_no in range(16):
        size = grown.invlists.list_size(list_no)
        assert presized.invlists.list_size(list_no) == size
        assert np.array_equal(faiss.rev_swig_ptr(presized.invlists.get_ids(list_no), size),
                              faiss.rev_swig_ptr(grown.invlists.get_ids(list_no), size))
        codes = size * grown.invlists.code_size
        assert np.array_equal(faiss.rev_swig_ptr(presized.invlists.get_codes(list_no), codes),
                              faiss.rev_swig_ptr(grown.invlists.get_codes(list_no), codes))
    assert np.array_equal(presized.search(vectors[:20], 5)[1], grown.search(vectors[:20], 5)[1])
