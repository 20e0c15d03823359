"""Issue 53, item 2: peak memory of the build from shards (`index --engine ray`'s last step, on one machine) as the
corpus grows, against the local streamed build of docs/benchmarks.md's "Corpus scale" runs.

Synthetic passages as corpus_scale.py makes them (60 words, hashing embedder at 384 dimensions); shards of 50,000
passages embedded here in 2 processes (what Ray's actors write), then each index type built from them in a process of
its own, whose peak RSS is read when it ends. With flat among the types, each index is then served as `index.mmap`
serves it (corpus_scale.py's probe, a process of its own): RSS after 200 searches, search p50, recall@10 against
exact search over the same vectors. A straight line through the first and last sizes projects each type to 21M (one
size: no projection).
Usage: .venv/bin/python benchmarks/shard_build.py [--passages 200000 1000000 | --passages 5000000] [--types flat ivfpq]
       [--write docs/benchmarks.md [--section shard_build_5m]]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus_scale import DIM, _exact_truth, _in_child, passages
from run_io import write_section

from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import embed_text
from tanglerag.index.shards import open_shards, plan_shards, shard_passages, write_shard
from tanglerag.tables import Table

PER_SHARD = 50_000
LOCAL_1M = {"flat": 1630, "ivfpq": 1900}
"""Peak RSS (MB) of the local streamed build at 1M passages, docs/benchmarks.md "Corpus scale" (hashing, 1M)."""


def _embed(args: tuple[str, int]) -> int:
    from tanglerag.index.shards import read_plan
    from tanglerag.testing import HashEmbedder

    folder, number = Path(args[0]), args[1]
    plan = read_plan(folder)
    chunk = shard_passages(plan, number)
    write_shard(folder, number, chunk, HashEmbedder(f"hash-{DIM}", DIM).embed([embed_text(p) for p in chunk]))
    return len(chunk)


def make_shards(n: int, work: Path) -> tuple[Path, float]:
    corpus, folder = work / f"corpus-{n}.jsonl", work / f"shards-{n}"
    with corpus.open("w") as fh:
        for row in passages(n):
            fh.write(json.dumps(row) + "\n")
    start = time.perf_counter()
    todo = open_shards(folder, plan_shards(corpus, IndexConfig(), f"hash-{DIM}", documents_per_shard=PER_SHARD))
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_embed, [(str(folder), number) for number in todo])
    return folder, time.perf_counter() - start


def child_build(folder: str, out: str, index_type: str) -> dict:
    from tanglerag.index.shard_build import build_from_shards

    start = time.perf_counter()
    build_from_shards(Path(out), Path(folder), IndexConfig(index_type=index_type))
    disk = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file()) / 2**20
    return {"build_s": time.perf_counter() - start, "peak_rss_mb": own_peak_mb(), "disk_mb": disk}


def own_peak_mb() -> float:
    """This process's peak resident memory (VmHWM). Not getrusage's ru_maxrss: Linux carries that over from the
    parent the child was forked from, and this script's parent holds the flat index it scores recall against."""
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024


def build_in_child(folder: Path, out: Path, index_type: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", str(folder), str(out), index_type],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def probe(work: Path, n: int, types: list[str]) -> dict[str, dict]:
    """Each type served as ``index.mmap`` serves it, in a process of its own (corpus_scale's probe): load, RSS, 200
    queries' p50, recall@10 against exact search over the same vectors (the flat index built from the same shards)."""
    truth = work / f"truth-{n}.json"
    _exact_truth(work / f"flat-{n}", truth, "hash")
    return {index_type: _in_child("probe", str(work / f"{index_type}-{n}"), "True", str(truth), "hash")
            for index_type in types}


def line_at(a: dict, b: dict, n1: int, n2: int, at: int, key: str) -> float:
    """``key`` on the straight line through its values at ``n1`` and ``n2`` passages, at ``at`` passages."""
    return a[key] + (b[key] - a[key]) * (at - n1) / (n2 - n1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--types", nargs="+", default=["flat", "ivfpq"])
    parser.add_argument("--project", type=int, default=21_000_000)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--section", default="shard_build", help="the docs section the numbers go to")
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child_build(*args.child)))
        return
    rows: dict[tuple[str, int], dict] = {}
    with tempfile.TemporaryDirectory(prefix="shard-build-") as work:
        for n in args.passages:
            folder, embed_s = make_shards(n, Path(work))
            print(f"{n:,} passages: shards embedded in {embed_s:.0f} s", flush=True)
            for index_type in args.types:
                rows[index_type, n] = build_in_child(folder, Path(work) / f"{index_type}-{n}", index_type)
                print(index_type, n, rows[index_type, n], flush=True)
            if "flat" in args.types:  # its exact search is the truth recall is scored against
                for index_type, served in probe(Path(work), n, args.types).items():
                    rows[index_type, n] |= served
                    print(index_type, n, served, flush=True)
    n1, n2 = args.passages[0], args.passages[-1]
    served = "flat" in args.types
    table = Table(["index_type", "passages", "build s", "build peak RSS MB", "index disk MB",
                   "local build peak RSS MB (Corpus scale)",
                   *(["served RSS MB (mmap, after 200 searches)", "of it not file pages MB", "search p50 ms",
                      "recall@10"] if served else [])])
    projected = Table(["index_type", f"build peak RSS at {args.project:,} (GB)", "index disk (GB)",
                       *(["served RSS (GB, mmap)", "of it not file pages (GB)"] if served else [])])
    for index_type in args.types:
        for n in args.passages:
            row = rows[index_type, n]
            local = f"{LOCAL_1M[index_type]:,}" if n == 1_000_000 and index_type in LOCAL_1M else "-"
            table.add(index_type, f"{n:,}", f"{row['build_s']:.0f}", f"{row['peak_rss_mb']:,.0f}",
                      f"{row['disk_mb']:,.0f}", local,
                      *([f"{row['rss_after_search_mb']:,.0f}", f"{row['anonymous_rss_after_search_mb']:,.0f}",
                         f"{row['search_p50_ms']:.2f}", f"{row['recall_at_10']:.3f}"] if served else []))
        if n1 == n2:  # one size: nothing to draw a line through
            continue
        a, b = rows[index_type, n1], rows[index_type, n2]
        keys = ["peak_rss_mb", "disk_mb", *(["rss_after_search_mb", "anonymous_rss_after_search_mb"] if served else [])]
        projected.add(index_type, *(f"{line_at(a, b, n1, n2, args.project, key) / 1024:.1f}" for key in keys))
    text = "\n".join([
        f"## Build from shards (`benchmarks/shard_build.py --passages {' '.join(map(str, args.passages))}`, one run)",
        (f"Synthetic 60-word passages, hashing embedder at {DIM} dimensions, shards of {PER_SHARD:,} (embedded here in "
         "2 processes, as Ray's actors write them); each build in a process of its own, its peak RSS read at its end; "
         "the store's SQLite, the BM25-less index, default settings."
         + (" Served: each index loaded with `index.mmap` in a process of its own, RSS after 200 searches (top-10) "
            "and the part of it that is not pages of mapped files (those are the page cache's, given back under "
            "memory pressure), recall@10 against exact search over the same vectors (the flat index)."
            if served else "")), "",
        *table.lines(),
        *(["", f"Straight lines through {n1:,} and {n2:,} passages:", "", *projected.lines()] if n1 != n2 else [])])
    print(text)
    if args.write:
        write_section(args.write, args.section, text)


if __name__ == "__main__":
    main()
