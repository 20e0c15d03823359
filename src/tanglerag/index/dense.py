"""Faiss index construction and loading. Vectors are L2-normalized, so inner product is cosine."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.errors import InputError

TRAINING_POINTS = 39
"""faiss wants about this many training points per centroid (IVF lists, PQ codes)."""
SAMPLE_PER_LIST = 64
"""IVF trains on this many vectors per list, a sample (faiss would take up to 256): at 1M passages k-means then
reads 256k vectors, not all of them, and a streamed build holds the sample rather than the corpus."""
MIN_NPROBE, NPROBE_SHARE = 8, 0.01
"""Lists an IVF search probes unless index.ivf_nprobe is set: 1% of them, at least 8 (see ivf_nprobe)."""


def build_dense(vectors: np.ndarray, config: IndexConfig) -> faiss.Index:
    """Create (and train, for IVF and IVF-PQ) an index of the configured type holding ``vectors``."""
    if config.index_type in ("ivf", "ivfpq"):
        index = trained_ivf(vectors[training_rows(len(vectors), config)], len(vectors), config)
        add_to_trained(index, lambda: [vectors], config)
        return index
    index = empty_dense(vectors.shape[1], config)
    index.add(vectors)
    return index


def empty_dense(dim: int, config: IndexConfig) -> faiss.Index:
    """A flat or HNSW index, which needs no training and takes vectors as they come, set up to search."""
    if config.index_type == "flat":
        return faiss.IndexFlatIP(dim)
    index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = config.hnsw_ef_construction
    configure_search(index, config)
    return index


def training_rows(n: int, config: IndexConfig) -> np.ndarray:
    """Sorted positions of the vectors an IVF index of ``n`` trains on: a seeded uniform sample of
    SAMPLE_PER_LIST per list (and what IVF-PQ's codes need), or all of them when that is not fewer."""
    size = SAMPLE_PER_LIST * ivf_nlist(n, config.ivf_nlist)
    if config.index_type == "ivfpq":
        size = max(size, pq_training_points(config))
    if size >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, size, replace=False))


def trained_ivf(sample: np.ndarray, n: int, config: IndexConfig) -> faiss.Index:
    """An empty IVF or IVF-PQ index sized for ``n`` vectors, its lists (and codes) trained on ``sample``, set up to
    search."""
    dim = sample.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    nlist = ivf_nlist(n, config.ivf_nlist)
    if config.index_type == "ivf":
        index: faiss.Index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    else:
        if n < pq_training_points(config):
            raise InputError(f"index_type ivfpq with pq_nbits={config.pq_nbits} needs at least "
                             f"{pq_training_points(config)} passages to train its codes, the corpus has {n}; "
                             "use flat or ivf, or lower index.pq_nbits")
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m(dim, config.pq_m), config.pq_nbits,
                                 faiss.METRIC_INNER_PRODUCT)
        if config.pq_refine:
            index = faiss.IndexRefineFlat(index)
    index.train(sample)
    configure_search(index, config)
    return index


def add_to_trained(index: faiss.Index, blocks: Callable[[], Iterable[np.ndarray]], config: IndexConfig) -> None:
    """Every vector of ``blocks`` into a trained IVF or IVF-PQ index: IVF-flat's lists, which hold the vectors
    themselves, allocated once at their final sizes (``add_presized``); IVF-PQ's small codes block by block."""
    if config.index_type == "ivf":
        add_presized(index, blocks)
        return
    for block in blocks():
        index.add(block)


def add_presized(index: faiss.Index, blocks: Callable[[], Iterable[np.ndarray]]) -> None:
    """Add every vector of ``blocks`` (read twice) to a trained IVF-flat index with each list allocated once at its
    final size. ``index.add`` grows a list by doubling, so at 1M passages a third more memory than the vectors was
    reserved and ingest peaked past 2 GB; here a first pass assigns the vectors to lists and counts them, and the
    second copies each block's vectors into their places. Same lists, same order as ``index.add``."""
    ivf = faiss.extract_index_ivf(index)
    lists = cast(faiss.InvertedLists, ivf.invlists)
    assigned = np.concatenate([ivf.quantizer.assign(block, 1).ravel() for block in blocks()])
    for list_no, count in enumerate(np.bincount(assigned, minlength=ivf.nlist)):
        lists.resize(list_no, int(count))
    filled, start = np.zeros(ivf.nlist, dtype="int64"), 0
    for block in blocks():
        order = np.argsort(assigned[start:start + len(block)], kind="stable")
        heads, firsts, counts = np.unique(assigned[start + order], return_index=True, return_counts=True)
        for list_no, first, count in zip(heads.tolist(), firsts.tolist(), counts.tolist(), strict=True):
            rows = order[first:first + count]
            ids, codes = rows + start, np.ascontiguousarray(block[rows])  # named: the pointers need them alive
            lists.update_entries(list_no, int(filled[list_no]), count, faiss.swig_ptr(ids),
                                 faiss.swig_ptr(codes.view("uint8")))
            filled[list_no] += count
        start += len(block)
    ivf.ntotal = index.ntotal = start


def pq_training_points(config: IndexConfig) -> int:
    return int(TRAINING_POINTS * 2 ** config.pq_nbits)


def ivf_nlist(n: int, requested: int) -> int:
    """~4*sqrt(n) lists unless set, capped so that every list has its training points."""
    wanted = requested or int(4 * math.sqrt(max(n, 1)))
    return max(1, min(wanted, n // TRAINING_POINTS or 1))


def ivf_nprobe(nlist: int, requested: int) -> int:
    """Lists searched per query: the setting, or a share of the lists that keeps recall as the corpus grows
    (a fixed 8 of 4,000 lists at 1M passages found 70% of the exact top 10, 40 found 99.6%)."""
    return min(nlist, requested or max(MIN_NPROBE, math.ceil(nlist * NPROBE_SHARE)))


def pq_m(dim: int, requested: int) -> int:
    """Sub-quantizers: the setting, or dimension/8; faiss needs a divisor of the dimension."""
    m = requested or max(1, dim // 8)
    if dim % m:
        raise InputError(f"index.pq_m={m} does not divide the embedding dimension {dim}")
    return m


def read_dense(path: Path, mmap: bool) -> faiss.Index:
    """Read a saved index, its vectors memory-mapped when ``mmap`` (pages come from disk as searches touch them,
    so resident memory stays a fraction of the file); an HNSW graph is always read whole."""
    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY if mmap else 0)


def configure_search(index: faiss.Index, config: IndexConfig) -> None:
    """Search-time knobs are not stored in the file; set them after every load."""
    if isinstance(index, faiss.IndexHNSWFlat):
        index.hnsw.efSearch = config.hnsw_ef_search
    elif isinstance(index, faiss.IndexIVF | faiss.IndexRefine):
        if isinstance(index, faiss.IndexRefine):
            index.k_factor = float(max(1, config.pq_refine))
        ivf = faiss.extract_index_ivf(index)
        ivf.nprobe = ivf_nprobe(ivf.nlist, config.ivf_nprobe)
