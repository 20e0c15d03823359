"""Does CDIT's trimming break a real index for the questions it never judged? No LLM needed (spaCy judge).

RAMDocs dev's documents are pooled into one index per type (Flat, HNSW, IVF; MiniLM). A seeded share of the
questions is run through CDIT's curation job (the same code as `tanglerag cdit trim`: retrieve top-k, judge, record
witnesses, separate at k witnesses, cut HNSW links) with the parse-based judge; the other questions are never
judged. For those, recall@10 against exact search on the untrimmed Flat index is measured before and after, per
index type, with the links cut and pairs separated. The LLM judge would cut different links; the point here is
what the trimming machinery does to everyone else's retrieval, at the cut rates a curation pass really produces.
"after, graph only" searches the trimmed HNSW graph without the separation table: the effect of the cut links alone.
Usage: python benchmarks/cdit_trim_recall.py [--judged 150] [--witnesses 1,2] [--top-k 10] [--seed 0]
       [--out docs/results/cdit_trim_recall.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from statistics import mean

import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.datasets.registry import load_dataset
from tanglerag.embeddings import Embedder
from tanglerag.index.passage_index import PassageIndex
from tanglerag.methods.cdit.curate import curate
from tanglerag.methods.cdit.method import CditMethod
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.tables import Table
from tanglerag.testing import canned_llm

ROOT = Path(__file__).resolve().parents[1]


class MemoEmbedder:
    """MiniLM with a memory, so three index types embed the pool once."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.memo: dict[str, np.ndarray] = {}

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.inner.embed(missing, show_progress=show_progress), strict=True))
        return np.stack([self.memo[t] for t in texts])


def recall(index: PassageIndex, queries: list[str], truth: list[set[str]], k: int, table: bool = True) -> float:
    """Mean share of the exact top-k found; ``table=False`` leaves the separation table out (the graph alone)."""
    def found(q: str) -> set[str]:
        hits = index.search(q, k) if table else index.search_untrimmed(q, k)
        return {h.passage.id for h in hits}
    return mean(len(t & found(q)) / k for q, t in zip(queries, truth, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judged", type=int, default=150)
    parser.add_argument("--witnesses", default="1,2", help="comma-separated k values, one curation pass each")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/cdit_trim_recall.json")
    args = parser.parse_args()
    _, examples = load_dataset("ramdocs")
    order = list(range(len(examples)))
    random.Random(args.seed).shuffle(order)
    judged = [examples[i] for i in order[:args.judged]]
    untouched = [examples[i].question for i in order[args.judged:]]
    passages = list({p.id: p for ex in examples for p in ex.passages}.values())
    base = Settings.load(overrides=["cdit.judge=spacy", "cdit.record=true", "cdit.determiner=false",
                                    f"retrieval.top_k={args.top_k}"])
    embedder = MemoEmbedder(Embedder(base.embedding))
    work = Path(tempfile.mkdtemp(prefix="cdit-trim-"))
    rows = []
    try:
        exact = PassageIndex.build(passages, embedder, IndexConfig(index_type="flat"))
        truth = [{h.passage.id for h in exact.search(q, 10)} for q in untouched]
        for witnesses, kind in [(int(w), kind) for w in args.witnesses.split(",") for kind in ("flat", "hnsw", "ivf")]:
            settings = base.model_copy(update={"cdit": base.cdit.model_copy(update={"witnesses": witnesses})})
            folder = work / f"{kind}-k{witnesses}"
            PassageIndex.build(passages, embedder, IndexConfig(index_type=kind)).save(folder)
            before = recall(PassageIndex.load(folder, embedder), untouched, truth, 10)
            runtime = Runtime(settings, index_dir=folder, llm=canned_llm(default="unknown"), embedder=embedder)
            resources = runtime.resources()
            method = CditMethod(resources)
            start = time.perf_counter()
            totals = curate(method, resources.retriever, [example.question for example in judged])
            judged_n, discarded = totals.judged + totals.reused, totals.discarded
            seconds = (time.perf_counter() - start) / len(judged)
            after_index = PassageIndex.load(folder, embedder)
            links = int(after_index.dense.hnsw.neighbors.size()) if kind == "hnsw" else None
            rows.append({"index": kind, "witnesses": witnesses, "judged_questions": len(judged), "untouched_questions": len(untouched),
                         "passages": len(passages), "judged_passages": judged_n, "discarded": discarded,
                         "separated_pairs": len(after_index.trim.separated), "cut_links": after_index.cut_link_count,
                         "neighbour_slots": links, "recall@10_before": round(before, 4),
                         "recall@10_after": round(recall(after_index, untouched, truth, 10), 4),
                         "recall@10_after_graph_only": round(recall(after_index, untouched, truth, 10, table=False), 4),
                         "seconds_per_judged_question": round(seconds, 3)})
            print(json.dumps(rows[-1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"judge": "spacy:" + base.cdit.cmd, "top_k": args.top_k, "judged_of": len(examples),
              "seed": args.seed, "embedding": base.embedding.model, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    table = Table(["index", "k witnesses", "untouched queries", "recall@10 before", "after", "after, graph only",
                   "separated pairs", "cut links", "judge s/question"],
                  [[r["index"], r["witnesses"], r["untouched_questions"], f"{r['recall@10_before']:.3f}",
                    f"{r['recall@10_after']:.3f}", f"{r['recall@10_after_graph_only']:.3f}", r["separated_pairs"],
                    r["cut_links"], f"{r['seconds_per_judged_question']:.2f}"] for r in rows])
    print(table.markdown())

if __name__ == "__main__":
    main()
