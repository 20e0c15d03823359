"""Issue 30: how many IVF lists a search must probe to keep recall@10 as the corpus grows, the evidence for
`index.ivf_nprobe`'s default (a share of the lists rather than a fixed count).

The vectors of `corpus_scale.py` (synthetic topical passages, hashing embedder, 384 dimensions), built the way
`tanglerag index` builds them (`build_dense`: ~4*sqrt(n) lists trained on a sample), then searched with several
nprobe values (and, for ivfpq, several re-ranking depths, `index.pq_refine`): recall@10 against exact search and
the p50 of one query, per index type. One process, one run; vectors are cached under --work so a second size or a re-run skips
embedding.

Usage: .venv/bin/python benchmarks/ivf_nprobe.py --passages 50000 1000000 [--work /tmp/ivf-nprobe]
         [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import time
from itertools import islice
from pathlib import Path

import faiss
import numpy as np
from corpus_scale import DIM, QUERIES, SEED, passages
from run_io import write_section

from tanglerag.config import IndexConfig
from tanglerag.index.dense import build_dense, ivf_nlist, ivf_nprobe
from tanglerag.tables import Table
from tanglerag.testing import HashEmbedder

PROBES = [8, 16, 32, 64, 128]
REFINES = [4, 8, 16, 32]
"""ivfpq's exact re-ranking: k x this many code-ranked candidates (index.pq_refine), swept at the default nprobe."""
EMBEDDER = HashEmbedder(f"hash-{DIM}", DIM)
DEFAULTS = IndexConfig()


def vectors(n: int, work: Path) -> np.ndarray:
    cached = work / f"hash-{n}.npy"
    if not cached.exists():
        work.mkdir(parents=True, exist_ok=True)
        rows = (row["text"] for row in passages(n))
        blocks = [EMBEDDER.embed(list(islice(rows, 50_000))) for _ in range(0, n, 50_000)]
        np.save(cached, np.vstack(blocks))
    return np.load(cached)


def sweep(n: int, work: Path) -> list[dict]:
    data = vectors(n, work)
    queries = EMBEDDER.embed([row["text"] for row in passages(QUERIES, seed=SEED + 1)])
    exact = faiss.IndexFlatIP(DIM)
    exact.add(data)
    _, truth = exact.search(queries, 10)
    rows = []
    for index_type in ("ivf", "ivfpq"):
        start = time.perf_counter()
        index = build_dense(data, IndexConfig(index_type=index_type))
        built = time.perf_counter() - start
        ivf = faiss.extract_index_ivf(index)
        chosen = ivf_nprobe(ivf.nlist, 0), DEFAULTS.pq_refine if index_type == "ivfpq" else 0
        tried = [(p, chosen[1]) for p in sorted({*PROBES, chosen[0]})]
        if index_type == "ivfpq":
            tried += [(chosen[0], k) for k in sorted({*REFINES, chosen[1]}) if k != chosen[1]]
        for nprobe, refine in tried:
            ivf.nprobe = nprobe
            if refine:
                index.k_factor = float(refine)
            rows.append({"passages": n, "index_type": index_type, "nlist": ivf.nlist, "nprobe": nprobe,
                         "pq_refine": refine, "default": (nprobe, refine) == chosen, "build_s": built,
                         **_searched(index, queries, truth)})
            print(rows[-1], flush=True)
        del index
    return rows


def _searched(index: faiss.Index, queries: np.ndarray, truth: np.ndarray) -> dict:
    times, found = [], []
    for query, relevant in zip(queries, truth, strict=True):
        start = time.perf_counter()
        _, ids = index.search(query[None, :], 10)
        times.append((time.perf_counter() - start) * 1000)
        found.append(len(set(ids[0].tolist()) & set(relevant.tolist())) / 10)
    return {"recall_at_10": float(np.mean(found)), "search_p50_ms": float(np.percentile(times, 50))}


def table(rows: list[dict], sizes: list[int]) -> str:
    nlists = ", ".join(f"{n:,}: {ivf_nlist(n, 0):,}" for n in sizes)
    lines = [f"## IVF lists probed (`benchmarks/ivf_nprobe.py --passages {' '.join(map(str, sizes))}`, one run)",
             (f"The corpus_scale vectors (hashing embedder, {DIM} d), built as `tanglerag index` builds them "
              f"(lists per size: {nlists}; trained on a sample); {QUERIES} queries, recall@10 against exact "
              "search. ivfpq re-ranks k x pq_refine candidates with their exact vectors. **bold**: the defaults."), ""]
    table = Table(["passages", "index_type", "nprobe", "pq_refine", "recall@10", "search p50 ms", "build s"])
    for r in rows:
        mark = "**" if r["default"] else ""
        table.add(f"{r['passages']:,}", r["index_type"], f"{mark}{r['nprobe']}{mark}",
                  f"{mark}{r['pq_refine'] or '-'}{mark}", f"{r['recall_at_10']:.3f}", f"{r['search_p50_ms']:.2f}",
                  f"{r['build_s']:.0f}")
    return "\n".join([*lines, *table.lines()])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, nargs="+", default=[50_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ivf-nprobe"))
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    rows = [row for n in args.passages for row in sweep(n, args.work)]
    text = table(rows, args.passages)
    print(text)
    if args.write:
        write_section(args.write, "ivf_nprobe", text)


if __name__ == "__main__":
    main()
