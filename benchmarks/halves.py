"""Issue 60, item 4: every dev set of docs/results/conflicts.md split into a tune half and a check half.

Rules and thresholds are chosen on the tune half and reported on the check half, so a figure in the report is no
longer one the rule was fitted to. The split is a stable hash of the seed and the question's id (sha256), not an
RNG over a list: a question keeps its half whatever set, sample or order it appears in (RAMDocs questions of the
mixed suite fall in the same half as in the peers sample), and adding questions moves none. The two rows of one
freshness question (asked plainly and "as of" a date, ids `freshness-<SituatedQA id>-now` / `-asof-<date>`) share
their half: they ask about one timeline, and a rule tuned on one of them has seen the other.

The sets, by the question ids they were run on:
  ramdocs-peers   RAMDocs dev, the peers sample (docs/results/peers/main: 100 ids, those of the ledger runs)
  conflictqa      conflictQA, StrategyQA half, the seeded 60 (docs/results/conflicts/conflictqa)
  mixed           the mixed dev suite's 60 (docs/results/conflicts/mixed)
  freshness       freshness v1 (benchmarks/data/freshness_dev.jsonl, 100 rows of 50 questions)
  freshness-v2    freshness v2 (benchmarks/data/freshness_v2_dev.jsonl, 120 rows of 60 questions)

Usage: .venv/bin/python benchmarks/halves.py counts [--seed 0]
       .venv/bin/python benchmarks/halves.py table docs/results/conflicts/freshness [--metrics as_of_correct,...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from run_io import load, mean_percent, usage_means

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
Half = Literal["tune", "check"]
HALVES: tuple[Half, Half] = ("tune", "check")
SETS = {"ramdocs-peers": ROOT / "docs/results/peers/main/predictions.jsonl",
        "conflictqa": ROOT / "docs/results/conflicts/conflictqa/predictions.jsonl",
        "mixed": ROOT / "docs/results/conflicts/mixed/predictions.jsonl",
        "freshness": ROOT / "benchmarks/data/freshness_dev.jsonl",
        "freshness-v2": ROOT / "benchmarks/data/freshness_v2_dev.jsonl"}
DEFAULT_METRICS = ("as_of_correct", "ramdocs_strict", "answer_recall", "misinfo_leak", "conflict_recall",
                   "false_conflict_rate", "tangle_score")
_FRESHNESS_ROW = re.compile(r"^(freshness2?-.+?)-(?:now|asof-[0-9-]+)$")


def family(question_id: str) -> str:
    """What the split hashes: the id, or a freshness row's question (its plain and as-of rows are one family)."""
    found = _FRESHNESS_ROW.match(question_id)
    return found.group(1) if found else question_id


def half(question_id: str, seed: int = 0) -> Half:
    """"tune" or "check" for a question id, the same on every machine and in every run (sha256 of seed and id)."""
    digest = hashlib.sha256(f"{seed}:{family(question_id)}".encode()).digest()
    return HALVES[digest[0] & 1]


def split(ids: Iterable[str], seed: int = 0) -> dict[Half, list[str]]:
    """The ids of each half, in the given order."""
    halves: dict[Half, list[str]] = {"tune": [], "check": []}
    for question_id in ids:
        halves[half(question_id, seed)].append(question_id)
    return halves


def set_ids(path: Path) -> list[str]:
    """A set's question ids, in file order: a dataset file's rows, or the questions a stored run answered."""
    seen: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            seen.setdefault(str(json.loads(line)["id"]), None)
    return list(seen)


def counts(seed: int = 0) -> list[str]:
    """Per set: rows and questions (families) in each half; a set whose file is missing is named as such."""
    table = Table(["set", "rows", "tune rows", "check rows", "questions", "tune questions", "check questions"])
    missing = []
    for name, path in SETS.items():
        if not path.exists():
            missing.append(f"{name} ({path.relative_to(ROOT)})")
            continue
        ids = set_ids(path)
        rows = Counter(half(i, seed) for i in ids)
        questions = Counter(half(f, seed) for f in dict.fromkeys(family(i) for i in ids))
        table.add(name, len(ids), rows["tune"], rows["check"], sum(questions.values()), questions["tune"],
                  questions["check"])
    return table.lines() + ([f"not found: {', '.join(missing)}"] if missing else [])


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def half_table(run: Path, metrics: Iterable[str] = DEFAULT_METRICS, seed: int = 0) -> list[str]:
    """A stored run's metric means in % (docs/results/conflicts/<run>: results.json and predictions.jsonl) for
    each method on the tune half, the check half and both, with the questions each half holds; a metric no row
    of the run has is left out. Calls per question are the method's cost (cached calls count)."""
    per_method = load(run)[1]
    shown = [m for m in metrics if any(r["metrics"].get(m) is not None for rows in per_method.values()
                                       for r in rows.values())]
    table = Table(["method", "half", "n", *shown, "calls/q"])
    for method, rows in per_method.items():
        halves = split(rows, seed)
        for name, ids in (("tune", halves["tune"]), ("check", halves["check"]), ("both", list(rows))):
            chosen = [rows[i] for i in ids]
            if not chosen:
                continue
            table.add(method, name, len(chosen), *(cell(mean_percent(chosen, m)) for m in shown),
                      f"{usage_means(chosen)[0]:.2f}")
    return table.lines()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sizes = sub.add_parser("counts", help="rows and questions per half of every dev set")
    sizes.add_argument("--seed", type=int, default=0)
    scored = sub.add_parser("table", help="a stored run's metrics per half")
    scored.add_argument("run", type=Path, help="a run folder with results.json and predictions.jsonl")
    scored.add_argument("--metrics", default=",".join(DEFAULT_METRICS))
    scored.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.command == "counts":
        print("\n".join(counts(args.seed)))
    else:
        print("\n".join(half_table(args.run, [m for m in args.metrics.split(",") if m], args.seed)))


if __name__ == "__main__":
    main()
