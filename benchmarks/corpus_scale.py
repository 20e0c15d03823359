"""Issue 30: what each index type costs as a corpus grows: ingest, disk, load, memory, search latency, recall.

Synthetic passages (60 words, 80% of them from one of 100 topics' vocabularies, seeded) embedded by the hashing embedder at 384
dimensions (MiniLM's), so that embedding time does not hide the index's cost. Every measurement runs in a process
of its own, since peak RSS is a per-process high-water mark: one ingest per index type (the streaming build that
`tanglerag index` makes), then one load per type and load mode, which times the load, reads RSS after it, searches
200 queries (p50 / p99 of one query) and scores recall@10 against exact search on the same vectors.

Usage: .venv/bin/python benchmarks/corpus_scale.py --passages 100000 [--json] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from run_io import table_head, write_section

DIM, WORDS, VOCAB, TOPICS, QUERIES, SEED = 384, 60, 5000, 100, 200, 7
TYPES = [("flat", False), ("flat", True), ("hnsw", False), ("ivf", False), ("ivf", True), ("ivfpq", False),
         ("ivfpq", True)]
FIELDS = ["index_type", "mmap", "ingest_s", "ingest_peak_rss_mb", "index_disk_mb", "load_s", "rss_after_load_mb",
          "search_p50_ms", "search_p99_ms", "recall_at_10"]


def passages(n: int, seed: int = SEED) -> Iterator[dict]:
    """Passages about one of TOPICS topics each: most words from the topic's own slice of the vocabulary, the rest
    from anywhere, so that vectors cluster as real passages' do (uniformly random words would not, and no
    clustering index could do well on them)."""
    rng, per_topic = random.Random(seed), VOCAB // TOPICS
    for i in range(n):
        topic = rng.randrange(TOPICS)
        words = [f"w{topic * per_topic + rng.randrange(per_topic)}" if rng.random() < 0.8 else f"w{rng.randrange(VOCAB)}"
                 for _ in range(WORDS)]
        yield {"id": f"s{i}", "text": " ".join(words)}


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest(folder: Path, index_type: str, n: int) -> dict:
    from tanglerag.config import IndexConfig
    from tanglerag.index.streaming import build_streaming
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage

    start = time.perf_counter()  # the streaming build that `tanglerag index` makes
    build_streaming(folder, (Passage(**row) for row in passages(n)), HashEmbedder(f"hash-{DIM}", DIM),
                    IndexConfig(index_type=index_type))
    disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20
    return {"ingest_s": time.perf_counter() - start, "ingest_peak_rss_mb": _peak_mb(), "index_disk_mb": disk}


def probe(folder: Path, mmap: bool, truth: Path) -> dict:
    from tanglerag.index.passage_index import PassageIndex
    from tanglerag.testing import HashEmbedder

    queries = _queries()
    start = time.perf_counter()
    index = PassageIndex.load(folder, HashEmbedder(f"hash-{DIM}", DIM), mmap=mmap)
    loaded, rss = time.perf_counter() - start, _rss_mb()
    exact, found, times = json.loads(truth.read_text()), [], []
    for query, relevant in zip(queries, exact, strict=True):
        start = time.perf_counter()
        hits = index.search(query, 10)
        times.append((time.perf_counter() - start) * 1000)
        found.append(len({h.passage.id for h in hits} & set(relevant)) / 10)
    return {"load_s": loaded, "rss_after_load_mb": rss, "search_p50_ms": float(np.percentile(times, 50)),
            "search_p99_ms": float(np.percentile(times, 99)), "recall_at_10": float(np.mean(found))}


def _queries() -> list[str]:
    return [row["text"] for row in passages(QUERIES, seed=SEED + 1)]


def _in_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(n: int, work: Path) -> list[dict]:
    ingested = {}
    for index_type in dict(TYPES):  # a type the corpus is too small for (ivfpq's training) is left out, saying why
        try:
            ingested[index_type] = _in_child("ingest", str(work / index_type), index_type, str(n))
        except subprocess.CalledProcessError as exc:
            print(f"{index_type} left out: {exc.stderr.strip().splitlines()[-1]}", file=sys.stderr)
    truth = work / "truth.json"
    _exact_truth(work / "flat", truth)
    rows = []
    for index_type, mmap in TYPES:
        if index_type not in ingested:
            continue
        row = {"index_type": index_type, "mmap": mmap, **ingested[index_type]}
        rows.append(row | _in_child("probe", str(work / index_type), str(mmap), str(truth)))
        print(_line(rows[-1]), file=sys.stderr)
    return rows


def _exact_truth(flat: Path, out: Path) -> None:
    """Exact top-10 of every query over the flat index (brute force on the same vectors)."""
    from tanglerag.index.passage_index import PassageIndex
    from tanglerag.testing import HashEmbedder

    index = PassageIndex.load(flat, HashEmbedder(f"hash-{DIM}", DIM))
    queries = _queries()
    out.write_text(json.dumps([[h.passage.id for h in index.search(q, 10)] for q in queries]))


def _line(row: dict) -> str:
    return " | ".join(f"{row[f]:.3g}" if isinstance(row[f], float) else str(row[f]) for f in FIELDS)


def table(rows: list[dict], n: int) -> str:
    lines = [f"## Corpus scale (`benchmarks/corpus_scale.py --passages {n}`, one run)",
             (f"{n:,} synthetic passages (hashing embedder, {DIM} dimensions), {QUERIES} queries, top-10, recall "
             "against exact search on the same vectors; each ingest and each load in a process of its own."), "",
             *table_head(f"| {' | '.join(FIELDS)} |"), *(f"| {_line(r)} |" for r in rows)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", type=Path)
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        kind, folder, *rest = args.child
        result = ingest(Path(folder), rest[0], int(rest[1])) if kind == "ingest" else \
            probe(Path(folder), rest[0] == "True", Path(rest[1]))
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory(prefix="corpus-scale-") as work:
        rows = measure(args.passages, Path(work))
    print(json.dumps(rows, indent=2) if args.json else table(rows, args.passages))
    if args.write:
        write_section(args.write, "corpus_scale", table(rows, args.passages))


if __name__ == "__main__":
    main()
