"""Faiss index construction and loading. Vectors are L2-normalized, so inner product is cosine."""

from __future__ import annotations

import math
from pathlib import Path

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.errors import InputError

TRAINING_POINTS = 39
"""faiss wants about this many training points per centroid (IVF lists, PQ codes)."""


def build_dense(vectors: np.ndarray, config: IndexConfig) -> faiss.Index:
    """Create (and train, for IVF and IVF-PQ) an index of the configured type holding ``vectors``."""
    dim = vectors.shape[1]
    if config.index_type == "flat":
        index: faiss.Index = faiss.IndexFlatIP(dim)
    elif config.index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = config.hnsw_ef_construction
    else:
        index = _trained_ivf(vectors, config)
    index.add(vectors)
    configure_search(index, config)
    return index


def _trained_ivf(vectors: np.ndarray, config: IndexConfig) -> faiss.Index:
    n, dim = vectors.shape
    quantizer = faiss.IndexFlatIP(dim)
    nlist = ivf_nlist(n, config.ivf_nlist)
    if config.index_type == "ivf":
        index: faiss.Index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    else:
        m, needed = pq_m(dim, config.pq_m), TRAINING_POINTS * 2 ** config.pq_nbits
        if n < needed:
            raise InputError(f"index_type ivfpq with pq_nbits={config.pq_nbits} needs at least {needed} passages to "
                             f"train its codes, the corpus has {n}; use flat or ivf, or lower index.pq_nbits")
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, m, config.pq_nbits, faiss.METRIC_INNER_PRODUCT)
        if config.pq_refine:
            index = faiss.IndexRefineFlat(index)
    index.train(vectors)
    return index


def ivf_nlist(n: int, requested: int) -> int:
    """~4*sqrt(n) lists unless set, capped so that every list has its training points."""
    wanted = requested or int(4 * math.sqrt(max(n, 1)))
    return max(1, min(wanted, n // TRAINING_POINTS or 1))


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
        ivf.nprobe = min(config.ivf_nprobe, ivf.nlist)
