"""Issue 53, item 6: what ranking each question's own passages costs in an eval, by `retrieval.mode`, and what it
ranks first.

Builds the passages of the first N RAMDocs questions as `eval` does (`PassageBuilder`, own scope, top-k), with
MiniLM behind the embedding cache in a fresh cache folder: `dense` twice (the first run embeds every passage, the
second finds them all in the cache), `hybrid` (cached vectors + BM25), `bm25` (nothing embedded). Per mode: seconds
per question, texts embedded, the share of questions with a correct document in the top k, and how many of the top k
the dense ranking also ranks there.
Usage: .venv/bin/python benchmarks/eval_retrieval.py [--dataset ramdocs] [--limit 40] [--top-k 5] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from run_io import write_section

from tanglerag.config import EmbeddingConfig, EvalConfig, RetrievalConfig
from tanglerag.datasets.registry import load_dataset
from tanglerag.embedding_cache import FILE_NAME, CachedEmbedder
from tanglerag.embeddings import Embedder
from tanglerag.eval.passages import PassageBuilder, is_gold
from tanglerag.tables import Table


def measure(dataset: str, limit: int, k: int) -> tuple[list[list[str]], int, int]:
    _, examples = load_dataset(dataset, limit=limit)
    inner = Embedder(EmbeddingConfig())
    inner.embed(["warm up"])  # loading the model is not the rate
    rows, dense_top = [], {}
    with tempfile.TemporaryDirectory() as cache:
        embedder = CachedEmbedder(inner, Path(cache) / FILE_NAME)
        for label, mode in [("dense, first run", "dense"), ("dense, cached vectors", "dense"),
                            ("hybrid, cached vectors", "hybrid"), ("bm25", "bm25")]:
            before = embedder.embedded
            builder = PassageBuilder(examples, embedder, EvalConfig(), retrieval=RetrievalConfig(mode=mode))
            start = time.perf_counter()
            tops = {ex.id: builder.build(ex, k) for ex in examples}
            seconds = time.perf_counter() - start
            if mode == "dense":
                dense_top = {qid: {h.passage.id for h in hits} for qid, hits in tops.items()}
            gold = sum(any(is_gold(h.passage, ex) for h in tops[ex.id]) for ex in examples) / len(examples)
            agree = sum(len(dense_top[qid] & {h.passage.id for h in hits}) for qid, hits in tops.items())
            shown = sum(len(hits) for hits in tops.values())
            rows.append([label, f"{1000 * seconds / len(examples):.1f}", f"{embedder.embedded - before:,}",
                         f"{100 * gold:.1f}%", f"{100 * agree / shown:.1f}%"])
    return rows, len(examples), sum(len(ex.passages) for ex in examples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ramdocs")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    rows, n, passages = measure(args.dataset, args.limit, args.top_k)
    lines = [(f"## Ranking each question's own passages (`benchmarks/eval_retrieval.py --limit {args.limit} "
             f"--top-k {args.top_k}`, one run)"),
             (f"The first {n} {args.dataset} questions ({passages} passages of their own), top-{args.top_k}, "
             "all-MiniLM-L6-v2 on this machine's CPU behind the embedding cache (a fresh cache folder), 2 shared cores; "
             "`retrieval.mode` picks the ranking (`--set retrieval.mode=bm25`)."), "",
             *Table(["retrieval.mode", "ms per question", "texts embedded", "a correct document in top-k",
                     "top-k shared with dense"], rows).lines()]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(args.write, "eval_retrieval", text)


if __name__ == "__main__":
    main()
