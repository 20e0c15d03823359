"""Issue 70: the LLM cache with several replicas, one file shared on one machine's disk or a file each.

Each replica is a process of its own asking questions drawn (seeded) from one pool, as replicas behind a load
balancer are asked what users ask: each question is looked up in the replica's ``CallCache`` and, on a miss, the
answer is written to it (the model call itself is not made: what is measured is the cache). With a ``shared`` file
every replica sees the answers the others wrote; with ``own`` files a question answered by one replica is a miss on
the next. Reported per setting: lookups+writes a second over all replicas, the slowest 1% of operations, the hit
rate, and the model calls the misses cost.

Run: .venv/bin/python benchmarks/llm_cache_share.py [--replicas 2 4] [--questions 2000] [--pool 1000]
         [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from run_io import write_section

from tanglerag.llm.base import RawCompletion
from tanglerag.llm.cache import CallCache
from tanglerag.tables import Table

ANSWER = RawCompletion(texts=["48 hours [1]\nSet aside: 24 hours: dated 2022-02-14, before 2023-08-08 [2]"],
                       prompt_tokens=900, completion_tokens=30)
"""What a cached ``vetted`` call holds: about its prompt's 900 tokens counted, an answer of two lines."""


def replica(path: str, seed: int, questions: int, pool: int, start: float, out: multiprocessing.Queue) -> None:
    """One replica's questions against its cache file: (seconds of each operation, hits)."""
    cache = CallCache(Path(path), memory_entries=4096)
    draw = random.Random(seed)
    times, hits = [], 0
    while time.time() < start:  # every replica starts at once
        time.sleep(0.001)
    for _ in range(questions):
        key = f"{draw.randrange(pool):064x}"
        began = time.perf_counter()
        if cache.get(key) is not None:
            hits += 1
        else:
            cache.put(key, ANSWER)
        times.append(time.perf_counter() - began)
    out.put((times, hits))


def measure(replicas: int, shared: bool, questions: int, pool: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out: multiprocessing.Queue = multiprocessing.Queue()
        start = time.time() + 2.0
        paths = [f"{folder}/cache.sqlite" if shared else f"{folder}/cache-{n}.sqlite" for n in range(replicas)]
        procs = [multiprocessing.Process(target=replica, args=(paths[n], n, questions, pool, start, out))
                 for n in range(replicas)]
        for proc in procs:
            proc.start()
        results = [out.get(timeout=600) for _ in procs]
        for proc in procs:
            proc.join()
    times = sorted(t for ts, _ in results for t in ts)
    hits = sum(h for _, h in results)
    total = replicas * questions
    return {"replicas": replicas, "shared": shared, "ops_per_s": total / max(sum(ts) for ts, _ in results),
            "p50_ms": statistics.median(times) * 1000, "p99_ms": times[int(0.99 * (len(times) - 1))] * 1000,
            "hit_rate": hits / total, "misses": total - hits, "errors": sum(len(ts) != questions for ts, _ in results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--questions", type=int, default=2000, help="each replica's")
    parser.add_argument("--pool", type=int, default=1000, help="distinct questions the users ask")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows = [measure(n, shared, args.questions, args.pool) for n in args.replicas for shared in (False, True)]
    table = Table(["replicas", "cache file", "operations/s (all replicas)", "p50 ms", "p99 ms", "hit rate",
                   "model calls (misses)"])
    for row in rows:
        table.add(row["replicas"], "shared" if row["shared"] else "one each", f"{row['ops_per_s']:,.0f}",
                  f"{row['p50_ms']:.2f}", f"{row['p99_ms']:.2f}", f"{row['hit_rate']:.3f}", f"{row['misses']:,}")
    text = "\n".join([
        "## The LLM cache with several replicas (`benchmarks/llm_cache_share.py`, one run)", "",
        (f"Each replica a process of its own on this machine (2 cores, one local disk), asking {args.questions:,} "
         f"questions drawn (seeded) from {args.pool:,} that users ask, each looked up in its `CallCache` (SQLite "
         "under a memory LRU) and written on a miss; no model is called. `shared`: one cache file for all the "
         "replicas; `one each`: a file per replica. Operations/s: all the replicas' lookups and writes over the "
         "longest replica's seconds."), "", *table.lines()])
    print(text)
    if args.out:
        write_section(args.out, "llm-cache-share", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
