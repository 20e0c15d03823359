"""Faiss index construction. Vectors are L2-normalized, so inner product is cosine."""

from __future__ import annotations

import math

import faiss
import numpy as np

from tanglerag.config import IndexConfig


def build_dense(vectors: np.ndarray, config: IndexConfig) -> faiss.Index:
    """Create (and train, for IVF) an index of the configured type holding ``vectors``."""
    dim = vectors.shape[1]
    if config.index_type == "flat":
        index: faiss.Index = faiss.IndexFlatIP(dim)
    elif config.index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = config.hnsw_ef_construction
    else:
        nlist = ivf_nlist(len(vectors), config.ivf_nlist)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
    index.add(vectors)
    configure_search(index, config)
    return index


def ivf_nlist(n: int, requested: int) -> int:
    """Faiss wants ~39 training points per centroid; cap the list count accordingly."""
    wanted = requested or int(4 * math.sqrt(max(n, 1)))
    return max(1, min(wanted, n // 39 or 1))


def configure_search(index: faiss.Index, config: IndexConfig) -> None:
    """Search-time knobs are not stored in the file; set them after every load."""
    if isinstance(index, faiss.IndexHNSWFlat):
        index.hnsw.efSearch = config.hnsw_ef_search
    elif isinstance(index, faiss.IndexIVF):
        index.nprobe = min(config.ivf_nprobe, index.nlist)
