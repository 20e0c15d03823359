"""Probe CDIT's judges alone against RAMDocs' document labels: which documents does each judge call inconsistent?

For a seeded sample of RAMDocs dev questions and each question's own documents, it runs CDIT's own judge step
(`CditMethod.judge`, so `--set` reaches it: `llm.structured`, `cdit.batched`, ...) with the spaCy judge (no LLM)
and, with --llm, the LLM judge, and prints per judge and CMD: the share of correct / misinformation / noise
documents judged inconsistent, precision and recall of "inconsistent" as a detector of misinfo + noise, unreadable
verdicts, agreement between the two judges, and per question the seconds, LLM tokens and constrained calls.
Usage: python benchmarks/cdit_judge_probe.py [--sample 30] [--seed 7] [--llm] [--cmd phi1,phi1+phi2]
         [--set llm.structured=on ...] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from tanglerag.aio import run_sync
from tanglerag.datasets.base import QAExample
from tanglerag.datasets.registry import load_dataset
from tanglerag.llm.factory import build_llm
from tanglerag.methods.base import Resources, make_method
from tanglerag.methods.cdit.method import CditMethod
from tanglerag.settings import Settings
from tanglerag.tables import Table
from tanglerag.tracking import track
from tanglerag.types import RetrievedPassage

HEADERS = ["judge", "cmd", "correct judged inconsistent", "misinfo", "noise", "P", "R", "unreadable", "s/question",
           "prompt tok/q", "completion tok/q", "constrained calls"]


def judged(examples: list[QAExample], settings: Settings, llm) -> tuple[list[bool | None], dict]:
    """Every document's verdict, and the cost of reaching them."""
    method = make_method("cdit", Resources.for_llm(llm, settings))  # the registry knows its answering method
    assert isinstance(method, CditMethod)
    verdicts: list[bool | None] = []
    cost: Counter = Counter()
    start = time.perf_counter()
    for ex in examples:
        hits = [RetrievedPassage(passage=p, score=1.0, rank=i + 1) for i, p in enumerate(ex.passages)]
        with track() as tracker:
            verdicts += run_sync(method.judge(ex.question, hits))
        cost["prompt"] += sum(c.prompt_tokens for c in tracker.calls)
        cost["completion"] += sum(c.completion_tokens for c in tracker.calls)
        cost["constrained"] += sum(c.constrained for c in tracker.calls)
        cost["calls"] += len(tracker.calls)
    cost["seconds"] = time.perf_counter() - start
    return verdicts, cost


def row(name: str, cmd: str, examples: list[QAExample], verdicts: list[bool | None], cost: dict) -> list[str]:
    flagged: Counter = Counter()
    totals: Counter = Counter()
    kinds = [p.metadata.get("type", "") for ex in examples for p in ex.passages]
    for kind, verdict in zip(kinds, verdicts, strict=True):
        totals[kind] += 1
        flagged[kind] += verdict is False
        flagged["unreadable"] += verdict is None
    bad, n = flagged["misinfo"] + flagged["noise"], len(examples)
    share = {k: flagged[k] / totals[k] if totals[k] else 0.0 for k in ("correct", "misinfo", "noise")}
    precision = bad / (bad + flagged["correct"]) if bad + flagged["correct"] else 0.0
    recall = bad / (totals["misinfo"] + totals["noise"]) if totals["misinfo"] + totals["noise"] else 0.0
    return [name, cmd, *(f"{100 * share[k]:.0f}% (n={totals[k]})" for k in ("correct", "misinfo", "noise")),
            f"{100 * precision:.0f}%", f"{100 * recall:.0f}%", str(flagged["unreadable"]), f"{cost['seconds'] / n:.2f}",
            f"{cost['prompt'] / n:.0f}", f"{cost['completion'] / n:.0f}", f"{cost['constrained']} of {cost['calls']}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cmd", default="phi1,phi1+phi2")
    parser.add_argument("--llm", action="store_true", help="also run the LLM judge")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="a setting, as in the CLI")
    parser.add_argument("--out", type=Path, default=None, help="also write the table as markdown here")
    args = parser.parse_args()
    base = Settings.load(overrides=args.overrides)
    llm = build_llm(base.llm, base.cache_dir)
    _, examples = load_dataset("ramdocs", sample=args.sample, seed=args.seed)
    sets = "".join(f" --set {s}" for s in args.overrides)
    intro = (f"# CDIT judges against RAMDocs' document labels\n\n`benchmarks/cdit_judge_probe.py --sample {args.sample} "
             f"--seed {args.seed}{' --llm' if args.llm else ''}{sets}`: each question's own documents, clipped to "
             f"{base.methods.passage_words} words; model `{base.llm.model if args.llm else '-'}`. P / R: "
             "\"inconsistent\" as a detector of misinformation and noise documents.\n")
    table, agreements = Table(HEADERS), []
    for cmd in args.cmd.split(","):
        verdicts = {}
        for name in ["spacy", *(["llm"] if args.llm else [])]:
            settings = Settings.load(overrides=[*args.overrides, f"cdit.cmd={cmd}", f"cdit.judge={name}"])
            verdicts[name], cost = judged(examples, settings, llm)
            table.add(*row(name, cmd, examples, verdicts[name], cost))
        if args.llm:
            same = sum((x is False) == (y is False) for x, y in zip(verdicts["spacy"], verdicts["llm"], strict=True))
            agreements.append(f"\nspaCy and LLM judges agree (discard or keep) on {same} of {len(verdicts['llm'])} "
                              f"documents with {cmd}.\n")
    text = "\n".join([intro, *table.lines(), *agreements]) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
