"""What the embedding cache buys an evaluation whose questions carry their own passages (issue 53).

40 RAMDocs dev questions (their own documents, top-10), `concat`, MiniLM on this machine's CPU, against a local fake
OpenAI-compatible server that answers after 200 ms (in a process of its own), LLM cache off so every question calls
the server. Without the embedding cache every run embeds every question's passages; with it the first run embeds
them once and a second run embeds nothing. Concurrency 1 and 8 in each state; ratios within this one run.
Prints the numbers and writes the "embedding-cache" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/embedding_cache.py [--questions 40]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from run_io import write_section
from throughput import server_process

from tanglerag.datasets.registry import load_dataset
from tanglerag.embedding_cache import CachedEmbedder
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]


def timed(settings: Settings, examples: list) -> tuple[float, int]:
    """Wall seconds of one eval and the texts MiniLM embedded in it (None: the cache was off)."""
    runtime = Runtime(settings)
    embedder = runtime.embedder
    start = time.perf_counter()
    EvalRunner(runtime).run("ramdocs", examples, ["concat"])
    seconds = time.perf_counter() - start
    return seconds, embedder.embedded if isinstance(embedder, CachedEmbedder) else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    _, examples = load_dataset("ramdocs", sample=args.questions, seed=0)
    table = Table(["embedding cache", "run", "concurrency", "seconds", "questions/s", "texts embedded",
                   "speed-up over concurrency 1"])
    with server_process(0.2) as base_url, tempfile.TemporaryDirectory() as cache:
        base = ["llm.backend=openai", f"llm.base_url={base_url}", "llm.cache=false", "llm.max_retries=0",
                "retrieval.top_k=10", "eval.passage_scope=own", f"cache_dir={cache}"]
        Runtime(Settings.load(overrides=base)).embedder.embed(["warm up"])  # load MiniLM outside the timings
        states = [("off", "every run", ["embedding.cache=false"]), ("on", "first (cold)", []), ("on", "second", [])]
        for state, run, extra in states:
            seconds = {}
            for n in (1, 8):
                settings = Settings.load(overrides=[*base, *extra, f"llm.concurrency={n}", f"eval.concurrency={n}"])
                if state == "on" and run.startswith("first"):
                    for name in ("embeddings.sqlite3", "embeddings.sqlite3-wal", "embeddings.sqlite3-shm"):
                        (Path(cache) / name).unlink(missing_ok=True)  # cold for each concurrency
                seconds[n], embedded = timed(settings, examples)
                table.add(state, run, n, f"{seconds[n]:.1f}", f"{len(examples) / seconds[n]:.2f}",
                          "-" if embedded < 0 else f"{embedded:,}", f"{seconds[1] / seconds[n]:.1f}x")
                print(table.last_line(), flush=True)
    text = "\n".join([
        "## Embedding cache (`benchmarks/embedding_cache.py`, one run)", "",
        (f"{len(examples)} RAMDocs dev questions with their own documents (top-10), `concat`, MiniLM on this "
         "machine's 2 CPU cores, against a fake OpenAI-compatible server answering after 200 ms in a process of its "
         "own, LLM cache off. The second run with the cache on reads every vector from `embeddings.sqlite3`; "
         "*texts embedded* are those the model embedded (the questions and their passages)."), "", *table.lines()])
    write_section(ROOT / "docs/benchmarks.md", "embedding-cache", text)


if __name__ == "__main__":
    main()
