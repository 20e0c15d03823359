"""Issue 29's mixed dev suite: questions of every tangle the dev data labels, each with its own passages, in the
generic QA format (`tanglerag eval --dataset FILE --scope own`).

Each question's class comes from its dataset's own labels, never from a model:
  clean        RAMDocs, one gold answer, no misinformation document (noise documents may be there)
  ambiguous    RAMDocs, several gold answers (same-name entities), no misinformation; ASQA dev, several readings
               (its passages are the annotators' knowledge passages; one answer per reading, the first alias, so that
               answer_recall is the share of readings answered)
  conflicting  RAMDocs, one gold answer and a misinformation document; conflictQA (StrategyQA half), the memory
               passage beside its counter-memory passage, gold "yes" or "no" and the other word as the wrong answer
               (its aliases "true" / "false" are left out: answer_recall would count them as answers still missing)
  mixed        RAMDocs, several gold answers and a misinformation document
  outdated     the freshness set (benchmarks/freshness_set.py, from SituatedQA-temp): dated passages of one answer each,
               asked plainly (gold: the newest) or "as of" a date (gold: the answer valid then); the other dates'
               answers are its wrong answers, and its rows keep `as_of` and `aliases` for `as_of_correct`
RAMDocs' wrong answers travel as `wrong_answers`, so `tangle_score` and `misinfo_leak` see them. No dev set labels
low-coverage questions (retrieval that missed), so the suite has none: `auto`'s low-coverage route is not measured
here. A seeded sample of K questions per class and source (7K in all). The outdated rows come last, after the
others' interleaved 6K, which keep their ids and order: runs stored before the slice resume, and HEAD=6K is that suite.

Usage: .venv/bin/python benchmarks/mixed_suite.py [--per-class 10] [--seed 0] --out runs/auto/mixed.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.registry import load_dataset


def ramdocs_class(example: QAExample) -> str:
    several, misinformed = len(example.answers) > 1, "misinformation" in example.tangles
    return {(False, False): "clean", (True, False): "ambiguous", (False, True): "conflicting",
            (True, True): "mixed"}[(several, misinformed)]


def record(example: QAExample, source: str, gold_tangle: str, answers: list[str] | None = None) -> dict:
    return {"id": example.id, "question": example.question, "answers": answers or example.answers,
            "passages": [{"id": p.id, "title": p.title, "text": p.text, **p.metadata} for p in example.passages],
            **({"tangles": example.tangles} if example.tangles else {}),
            "wrong_answers": example.metadata.get("wrong_answers", []), "source": source, "gold_tangle": gold_tangle}


def sampled(items: list, k: int, seed: int) -> list:
    """A seeded sample in file order (all of them when there are fewer)."""
    chosen = sorted(random.Random(seed).sample(range(len(items)), min(k, len(items))))
    return [items[i] for i in chosen]


def interleaved(groups: list[list[dict]]) -> Iterator[dict]:
    """One question of each group in turn, so that the first N of the suite (run_auto.sh's HEAD) mix every class."""
    for turn in range(max(map(len, groups))):
        yield from (group[turn] for group in groups if turn < len(group))


def suite(per_class: int, seed: int) -> list[dict]:
    return [*interleaved(list(groups(per_class, seed))), *_freshness(per_class, seed)]


def groups(per_class: int, seed: int) -> Iterator[list[dict]]:
    ramdocs = load_dataset("ramdocs")[1]
    for tangle in ("clean", "ambiguous", "conflicting", "mixed"):
        yield [record(e, "ramdocs", tangle) for e in sampled([e for e in ramdocs if ramdocs_class(e) == tangle],
                                                             per_class, seed)]
    yield [_conflictqa(e) for e in sampled(load_dataset("conflictqa")[1], per_class, seed)]
    asqa = [e for e in load_dataset("asqa")[1] if len(e.metadata["disambig"]) > 1]
    yield [record(e, "asqa", "ambiguous", list(dict.fromkeys(r["answer"] for r in e.metadata["disambig"])))
           for e in sampled(asqa, per_class, seed)]


def _freshness(per_class: int, seed: int) -> list[dict]:
    """The outdated slice, with the keys of a freshness row that `record` does not carry and `as_of_correct` reads."""
    kept = ("aliases", "rule", "as_of", "newest_answer")
    return [{**record(e, "freshness", "outdated"), **{k: e.metadata[k] for k in kept if k in e.metadata}}
            for e in sampled(load_dataset("freshness")[1], per_class, seed)]


def _conflictqa(example: QAExample) -> dict:
    truth = "yes" if "yes" in example.answers else "no"
    example.metadata["wrong_answers"] = ["no" if truth == "yes" else "yes"]
    return record(example, "conflictqa", "conflicting", [truth])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-class", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = suite(args.per_class, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    counts = Counter(f"{row['source']}/{row['gold_tangle']}" for row in rows)
    print(f"{len(rows)} questions to {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
