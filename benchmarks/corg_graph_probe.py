"""Probe COrg's graph constructor alone: how often its relation labels match RAMDocs' document labels.

Builds only the graph (no answers) for a seeded sample of RAMDocs questions, in one or both modes,
and prints label accuracy against the relations the labels imply, the confusion counts, and the
calls and tokens spent. Cheap enough to compare prompt variants before a full evaluation.
``--structured on`` asks every relation (or extraction) as JSON under an output schema (``llm.structured``).
Usage: python benchmarks/corg_graph_probe.py [--sample N] [--modes pairwise,extract] [--structured off,on] [--show]
"""

from __future__ import annotations

import argparse
from collections import Counter

from corg_report import silver_relation

from tanglerag.datasets.registry import load_dataset
from tanglerag.embeddings import Embedder
from tanglerag.eval.passages import PassageBuilder
from tanglerag.llm.factory import build_llm
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.constructor import GraphConstructor
from tanglerag.methods.corg.graph import ContextGraph
from tanglerag.methods.corg.reranker import organize
from tanglerag.settings import Settings
from tanglerag.tracking import Tracker, track


def probe(mode: str, structured: str, sample: int, seed: int, show: bool) -> None:
    settings = Settings.load(None, [f"corg.graph={mode}", f"llm.structured={structured}"])
    _, examples = load_dataset("ramdocs", sample=sample, seed=seed)
    llm = build_llm(settings.llm, settings.cache_dir)
    builder = PassageBuilder(examples, Embedder(settings.embedding), settings.eval)
    constructor = GraphConstructor(llm, settings.section(CorgConfig), settings.methods.passage_words)
    tracker = Tracker()  # one tracker over the whole probe: its usage is the probe's cost
    confusion: Counter = Counter()
    groups = kept = unparsed = pairs_judged = 0
    for example in examples:
        passages = builder.build(example, 10)
        with track(tracker):
            graph: ContextGraph = constructor.build(example.question, passages)
        unparsed += graph.unparsed
        pairs_judged += graph.pairs_judged if mode == "pairwise" else graph.size
        meta = [p.passage.metadata for p in passages]
        edges = sorted((i, j, data["relation"], silver_relation(meta[i], meta[j], len(example.answers)))
                       for i, j, data in graph.graph.edges(data=True))
        confusion.update((silver, relation) for _, _, relation, silver in edges)
        organized = organize(graph)
        groups += len(organized.groups)
        kept += sum(len(g) for g in organized.groups)
        if show:
            print(example.question, [m["type"] for m in meta], organized.groups)
            for i, j, relation, silver in edges:
                print(f"   [{i + 1}]-[{j + 1}] {relation:<14} silver={silver}")
    judged = {k: v for k, v in confusion.items() if k[0] is not None}
    hits = sum(v for (s, r), v in judged.items() if s == r)
    total = sum(judged.values())
    usage = tracker.usage.totals()
    print(f"\n{mode}, structured={structured}: label accuracy {100 * hits / max(total, 1):.1f}% of {total} pairs; "
          f"unparsed {unparsed} of {pairs_judged} {'judged pairs' if mode == 'pairwise' else 'contexts'}; "
          f"groups/q {groups / len(examples):.2f}, contexts kept/q {kept / len(examples):.2f}; "
          f"calls {usage['llm_calls'] + usage['cached_calls']}, prompt tokens {usage['prompt_tokens']}, "
          f"completion tokens {usage['completion_tokens']}")
    for silver in sorted({s for s, _ in judged}):
        row = {r: v for (s, r), v in judged.items() if s == silver}
        print(f"   silver {silver:<14} -> " + ", ".join(f"{r} {v}" for r, v in sorted(row.items(), key=lambda x: -x[1])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="pairwise,extract")
    parser.add_argument("--structured", default="off", help="llm.structured values to compare, e.g. off,on")
    parser.add_argument("--show", action="store_true", help="print every question's edges")
    args = parser.parse_args()
    for mode in args.modes.split(","):
        for structured in args.structured.split(","):
            probe(mode, structured, args.sample, args.seed, args.show)


if __name__ == "__main__":
    main()
