"""Probe CDIT's judges alone against RAMDocs' document labels: which documents does each judge call inconsistent?

For a seeded sample of RAMDocs dev questions and each question's own documents, it runs the spaCy judge (no LLM)
and, with --llm, the LLM judge (per passage), and prints per judge and CMD: the share of correct / misinformation /
noise documents judged inconsistent, precision and recall of "inconsistent" as a detector of misinfo + noise,
unreadable verdicts, agreement between the two judges, and seconds per question.
Usage: python benchmarks/cdit_judge_probe.py [--sample 30] [--seed 7] [--llm] [--cmd phi1,phi1+phi2] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from tanglerag.datasets.registry import load_dataset
from tanglerag.embeddings import Embedder
from tanglerag.llm.client import Request
from tanglerag.llm.factory import build_llm
from tanglerag.methods.cdit.cmd_parse import SpacyJudge
from tanglerag.methods.cdit.prompts import judge_messages, parse_verdict
from tanglerag.settings import Settings
from tanglerag.text import clip_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cmd", default="phi1,phi1+phi2")
    parser.add_argument("--llm", action="store_true", help="also run the LLM judge (one call per document)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table as markdown here")
    args = parser.parse_args()
    settings = Settings.load()
    _, examples = load_dataset("ramdocs", sample=args.sample, seed=args.seed)
    words = settings.methods.passage_words
    judges = {"spacy": SpacyJudge(Embedder(settings.embedding), settings.cdit.spacy_threshold)}
    llm = build_llm(settings.llm, settings.cache_dir) if args.llm else None
    lines = [(f"# CDIT judges against RAMDocs' document labels\n\n`benchmarks/cdit_judge_probe.py --sample {args.sample} "
             f"--seed {args.seed}{' --llm' if llm else ''}`: each question's own documents, clipped to {words} words; "
             f"model `{settings.llm.model if llm else '-'}`. P / R: \"inconsistent\" as a detector of misinformation "
             "and noise documents.\n"),
             "| judge | cmd | correct judged inconsistent | misinfo | noise | P | R | unreadable | s/question |",
             "|---|---|---|---|---|---|---|---|---|"]
    verdicts: dict[tuple[str, str], list[bool | None]] = {}
    for cmd in args.cmd.split(","):
        for name in ["spacy", *(["llm"] if llm else [])]:
            flagged: Counter = Counter()
            totals: Counter = Counter()
            found: list[bool | None] = []
            start = time.perf_counter()
            for ex in examples:
                texts = [clip_words(p.text, words) for p in ex.passages]
                if name == "spacy":
                    out = judges["spacy"].judge(cmd, ex.question, texts)
                else:
                    replies = llm.complete_many([Request(judge_messages(cmd, ex.question, t),
                                                         llm.params(max_tokens=settings.cdit.judge_tokens))
                                                 for t in texts])
                    out = [parse_verdict(r.text) for r in replies]
                for passage, verdict in zip(ex.passages, out, strict=True):
                    kind = passage.metadata.get("type", "")
                    totals[kind] += 1
                    flagged[kind] += verdict is False
                    flagged["unreadable"] += verdict is None
                found += out
            seconds = (time.perf_counter() - start) / len(examples)
            verdicts[(name, cmd)] = found
            bad = flagged["misinfo"] + flagged["noise"]
            all_flagged = bad + flagged["correct"]
            share = {k: flagged[k] / totals[k] if totals[k] else 0.0 for k in ("correct", "misinfo", "noise")}
            precision = bad / all_flagged if all_flagged else 0.0
            recall = bad / (totals["misinfo"] + totals["noise"]) if totals["misinfo"] + totals["noise"] else 0.0
            lines.append(f"| {name} | {cmd} | {100 * share['correct']:.0f}% (n={totals['correct']}) | "
                         f"{100 * share['misinfo']:.0f}% (n={totals['misinfo']}) | "
                         f"{100 * share['noise']:.0f}% (n={totals['noise']}) | {100 * precision:.0f}% | "
                         f"{100 * recall:.0f}% | {flagged['unreadable']} | {seconds:.2f} |")
        if llm:
            a, b = verdicts[("spacy", cmd)], verdicts[("llm", cmd)]
            same = sum((x is False) == (y is False) for x, y in zip(a, b, strict=True))
            lines.append(f"\nspaCy and LLM judges agree (discard or keep) on {same} of {len(a)} documents with {cmd}.\n")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
