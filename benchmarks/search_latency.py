"""How long one search takes through the Python API (issue 63, item 1): ``Tanglerag.search`` on the bundled sample
corpus, indexed with the default settings (MiniLM on the CPU, flat index, top-5), one query at a time.

The queries are eight words from the start or a quarter of the way into a sample passage, so none repeats and none
is a text the index embedded (the embedding cache, on by default, starts empty and is not what is measured).
The model is loaded and one search run before the timings. Prints the machine note and the numbers, and writes the
"search" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/search_latency.py [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from run_io import write_section

import tanglerag
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(tanglerag.__file__).parent / "sample_data" / "sample_corpus.jsonl"


def queries(rag: tanglerag.Tanglerag, count: int) -> list[str]:
    """``count`` distinct queries of eight words, from the start and each quarter of every indexed passage."""
    found: dict[str, None] = {}
    for passage in rag.runtime.index.passages:  # type: ignore[union-attr]
        words = passage.text.split()
        for start in (0, len(words) // 4, len(words) // 2, 3 * len(words) // 4):
            if len(words) - start >= 8:
                found[" ".join(words[start:start + 8])] = None
    if len(found) < count:
        raise SystemExit(f"the sample gives {len(found)} distinct queries, fewer than {count}")
    return list(found)[:count]


def machine_note() -> str:
    """The cores this process may use, the load around it and the embedder's threads: the numbers move with them."""
    import torch  # loaded by the embedder already

    cores = len(os.sched_getaffinity(0))
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (f"{platform.processor() or platform.machine()}, {cores} cores usable, load average {load} (1/5/15 min), "
            f"Python {platform.python_version()}, torch {torch.__version__} with {torch.get_num_threads()} threads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = tanglerag.Settings.load(overrides=[f"cache_dir={tmp}/cache"])
        rag = tanglerag.Tanglerag(Path(tmp) / "index", settings)
        started = time.perf_counter()
        count = rag.build(SAMPLE).count
        built = time.perf_counter() - started
        asked = queries(rag, args.queries)
        rag.search("warm up")  # the model and the index load here, outside the timings
        before = machine_note()
        seconds = []
        for query in asked:
            start = time.perf_counter()
            rag.search(query)
            seconds.append(time.perf_counter() - start)
        after = machine_note()
    ms = 1000 * np.array(seconds)
    table = Table(["queries", "passages", "p50 ms", "p95 ms", "mean ms", "max ms"])
    table.add(len(ms), count, f"{np.percentile(ms, 50):.1f}", f"{np.percentile(ms, 95):.1f}", f"{ms.mean():.1f}",
              f"{ms.max():.1f}")
    print(f"machine before: {before}\nmachine after:  {after}\nindex built in {built:.1f}s")
    print("\n".join(table.lines()))
    text = "\n".join([
        "## Search latency (`benchmarks/search_latency.py`, one run)", "",
        (f"`Tanglerag.search` through the Python API, one query at a time, on the bundled sample corpus indexed with "
         f"the default settings ({count} passages, MiniLM on the CPU, flat index, top-5, the embedding cache on and "
         "empty for these queries); each query is eight words from a passage (its start or a quarter of the way in), none "
         "repeated. The model is loaded before the timings; a search embeds its query and ranks the index, with no "
         "LLM call. Machine at the start: " + before + "; at the end: " + after + "."), "", *table.lines()])
    write_section(ROOT / "docs/benchmarks.md", "search", text)


if __name__ == "__main__":
    main()
