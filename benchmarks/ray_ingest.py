"""Issue 53, item 1: `index --engine ray` with 1 and 2 local Ray workers against the local streamed build, with the
hashing embedder and with MiniLM, on the same synthetic corpus; and whether the vectors are the local path's.

Passages as corpus_scale.py makes them (60 words; MiniLM's from its own vocabulary), a flat index. The local path is
`build_streaming` in this process (MiniLM: torch at 1 thread, the core one Ray worker holds, and at its default);
the Ray path is the CLI's: plan the shards (8 a run, so both workers have work), embed them on an actor pool of a
local Ray started here with 2 CPUs (each actor holds 1, and Ray gives its torch 1 thread), build from the shards.
Actor start and model load are inside the embed time, as a user would wait for them.
With --gpu N, also N passages of MiniLM on a CUDA GPU: the local path on it, and the Ray path with one actor that
holds the GPU (what `index --engine ray` gives each actor on a cluster with GPUs); the CPU rows then pin MiniLM to the CPU.
Usage: .venv/bin/python benchmarks/ray_ingest.py [--hash 200000] [--minilm 4000] [--gpu 0] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from corpus_scale import DIM, _vocabulary, passages
from run_io import write_section

from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.ray_ingest import embed_shards
from tanglerag.index.shard_build import build_from_shards
from tanglerag.index.shards import plan_shards
from tanglerag.index.streaming import build_streaming
from tanglerag.ingest import stream_corpus
from tanglerag.tables import Table

CONFIG = IndexConfig(index_type="flat")
SHARDS = 8


def _make(name: str):
    from tanglerag.config import EmbeddingConfig
    from tanglerag.embeddings import Embedder
    from tanglerag.testing import HashEmbedder

    if name == "hash":
        return HashEmbedder(f"hash-{DIM}", DIM)
    # on a GPU machine the CPU rows stay on the CPU; a GPU batch is larger, as a user embedding there would set it
    return Embedder(EmbeddingConfig(backend="sentence-transformers", device="cuda", batch_size=256)
                    if name == "minilm-gpu" else EmbeddingConfig(device="cpu"))


class Factory:
    """What each actor builds its embedder with (picklable by reference: this module is not on the workers' path,
    so it travels by value)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self):
        return _make(self.name)


def _vectors(folder: Path, embedder) -> np.ndarray:
    index = PassageIndex.load(folder, embedder)
    return index.vectors_at(list(range(len(index.passages))))


def measure(name: str, n: int, work: Path) -> list[dict]:
    import torch

    embedder = _make(name)
    corpus = work / f"{name}.jsonl"
    with corpus.open("w") as fh:
        for row in passages(n, vocabulary=_vocabulary(embedder)):
            fh.write(json.dumps(row) + "\n")
    rows = []
    gpu = name == "minilm-gpu"
    threads = [os.cpu_count() or 1] if gpu else [1, os.cpu_count() or 1] if name == "minilm" else [1]
    for count in threads:
        torch.set_num_threads(count)
        embedder.embed(["warm up"])
        start = time.perf_counter()
        build_streaming(work / f"local-{name}-{count}", stream_corpus(corpus), embedder, CONFIG)
        seconds = time.perf_counter() - start
        rows.append({"embedder": name, "path": f"local, {count} thread(s)", "plan_s": 0.0, "embed_s": seconds,
                     "build_s": 0.0, "total_s": seconds, "same": "-"})
    local = _vectors(work / f"local-{name}-{threads[0]}", embedder)
    for workers in (1,) if gpu else (1, 2):
        shards, out = work / f"{name}-{workers}.shards", work / f"ray-{name}-{workers}"
        start = time.perf_counter()
        plan = plan_shards(corpus, CONFIG, embedder.model_name, documents_per_shard=-(-n // SHARDS))
        planned = time.perf_counter()
        embed_shards(plan, shards, Factory(name), actors=workers, gpus_per_actor=1.0 if gpu else 0.0,
                     cpus_per_actor=2.0 if gpu else 1.0)  # a GPU actor tokenizes on a second core (encode_overlapped)
        embedded = time.perf_counter()
        build_from_shards(out, shards, CONFIG)
        built = time.perf_counter()
        diff = float(np.abs(_vectors(out, embedder) - local).max())
        rows.append({"embedder": name, "path": f"ray, {workers} worker(s)", "plan_s": planned - start,
                     "embed_s": embedded - planned, "build_s": built - embedded, "total_s": built - start,
                     "same": "identical" if diff == 0 else f"max diff {diff:.1e}"})
        shutil.rmtree(shards)
    for row in rows:
        row["passages_s"] = n / row["total_s"]
    return rows


def table(rows: list[dict], sizes: dict[str, int]) -> str:
    lines = []
    for name, n in sizes.items():
        mine = [r for r in rows if r["embedder"] == name]
        one = next(r for r in mine if r["path"] == "ray, 1 worker(s)")
        two = next((r for r in mine if r["path"] == "ray, 2 worker(s)"), None)
        local = mine[0]
        lines += [f"**{name}**, {n:,} passages:", "",
                  *Table(["path", "plan s", "embed s", "build s", "total s", "passages/s", "vectors vs local"],
                         [[r["path"], f"{r['plan_s']:.1f}", f"{r['embed_s']:.1f}", f"{r['build_s']:.1f}",
                           f"{r['total_s']:.1f}", f"{r['passages_s']:,.0f}", r["same"]] for r in mine]).lines(), "",
                  ((f"2 workers over 1: **{one['total_s'] / two['total_s']:.2f}x** in total, "
                    f"{one['embed_s'] / two['embed_s']:.2f}x in the embed step; ") if two else "")
                  + (f"Ray with 1 worker over the local path ({local['path']}): "
                     f"{one['total_s'] / local['total_s']:.2f}x the time."), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hash", type=int, default=200_000)
    parser.add_argument("--minilm", type=int, default=4_000)
    parser.add_argument("--gpu", type=int, default=0, help="passages of MiniLM on a CUDA GPU (0: none)")
    parser.add_argument("--write", type=Path)
    parser.add_argument("--section", default="ray_ingest", help="the docs section the numbers go to")
    args = parser.parse_args()
    import ray

    os.environ["RAY_worker_niceness"] = "0"  # noqa: SIM112  # Ray reads this name; its default nice 15 starves workers
    # two CPUs for the workers, the GPU for one actor; the driver's own work (planning, the build) is not Ray's
    ray.init(num_cpus=2 + (2 if args.gpu else 0), num_gpus=1 if args.gpu else 0, include_dashboard=False,
             log_to_driver=False, logging_level="ERROR")
    sizes = {name: n for name, n in (("hash", args.hash), ("minilm", args.minilm), ("minilm-gpu", args.gpu)) if n}
    rows = []
    try:
        with tempfile.TemporaryDirectory() as work:
            for name, n in sizes.items():
                rows += measure(name, n, Path(work))
                print(table(rows, {name: n}), flush=True)
    finally:
        ray.shutdown()
    flags = {"hash": "--hash", "minilm": "--minilm", "minilm-gpu": "--gpu"}
    text = "\n".join([
        "## Ingest on Ray (`benchmarks/ray_ingest.py"
        + "".join(f" {flags[name]} {n}" for name, n in sizes.items()) + "`, one run)",
        (f"Synthetic 60-word passages (corpus_scale.py's), a flat index, this machine's {os.cpu_count()} cores"
        f"{_gpu_name()}; a local Ray with 2 CPUs for the CPU workers, one per worker (an actor: its torch gets 1 "
        f"thread), {SHARDS} shards a run. Plan: the pass "
        "that cuts the file into shards; embed: actors started, model loaded, every shard read, chunked, embedded "
        "and written; build: the index from the shards. `vectors vs local`: against the local build at 1 thread."), "",
        table(rows, sizes)])
    print(text)
    if args.write:
        write_section(args.write, args.section, text)


def _gpu_name() -> str:
    import torch

    return f" and one {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""


if __name__ == "__main__":
    main()
