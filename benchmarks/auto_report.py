"""Issue 29's report: `auto` beside every method it routes to on the mixed dev suite, per tangle class, with the
probe's accuracy against the datasets' own labels and the cost-quality frontier.

Reads the `benchmarks/run_auto.sh` runs (docs/results/auto/main: auto and the methods it routes to; every other
folder there: auto alone under other routes, shown as auto/<folder>) and writes docs/results/auto.md and the plot
docs/results/auto_frontier.png (tangle score with its 95% CI against LLM calls per question). A question's class
and source come from what its prediction row carries (the dataset's tangle labels and its id), so the report
needs no copy of the suite.
Usage: .venv/bin/python benchmarks/auto_report.py [--runs docs/results/auto]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from run_io import (
    group_table,
    load,
    mean_percent,
    methods_frontier,
    on_common_questions,
    paired_text,
    step,
    usage_means,
    write_report,
)

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
METRICS = {"tangle_score": "tangle score", "answer_recall": "recall", "misinfo_leak": "misinfo leak",
           "ramdocs_strict": "strict"}
CLASSES = ("clean", "ambiguous", "conflicting", "mixed", "low-coverage")


def gold_class(row: dict) -> str:
    """The suite's class from the dataset's labels: a misinformation (or counter-memory) passage makes a question
    conflicting, mixed when it also has several answers; several answers alone make it ambiguous."""
    tangles = set(row.get("tangles", []))
    conflicting, several = bool(tangles & {"misinformation", "conflict"}), "ambiguous" in tangles
    return ("mixed" if several else "conflicting") if conflicting else "ambiguous" if several else "clean"


def source(row: dict) -> str:
    """The suite's ids: ramdocs-NNNN, conflictqa-NNNN, and ASQA's own (numbers, some negative)."""
    prefix = row["id"].partition("-")[0]
    return prefix if prefix in ("ramdocs", "conflictqa") else "asqa"


def main_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    table = Table(["method", *METRICS.values(), "auto minus method [95% CI]", "LLM calls/q", "prompt tok/q",
                   "model s/q"])
    for method, rows in per_q.items():
        values = list(rows.values())
        cells = [f"{v:.1f}" if (v := mean_percent(values, m)) is not None else "-" for m in METRICS]
        versus = "-" if method == "auto" else paired_text({"auto": per_q["auto"], method: rows}, "auto", method,
                                                           "tangle_score")
        calls, prompt, seconds = usage_means(values)
        table.add(method, *cells, versus, f"{calls:.2f}", f"{prompt:,.0f}", f"{seconds:.1f}")
    return table.lines()


def class_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    classes = {tangle: (lambda row, tangle=tangle: gold_class(row) == tangle) for tangle in CLASSES}
    return group_table(per_q, classes, "tangle_score", "class (datasets' labels)")


def probed_class_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    """Each method's score on the questions the probe put in each class: the evidence a route is chosen by."""
    probed = {i: s["tangle"] for i, r in per_q["auto"].items() if (s := step(r, "auto"))}
    classes = {tangle: (lambda row, tangle=tangle: probed.get(row["id"]) == tangle) for tangle in CLASSES}
    return group_table(per_q, classes, "tangle_score", "class (auto's probe)")


def runs(folder: Path) -> dict[str, dict[str, dict]]:
    """main's methods, auto first, then auto from every other run folder as auto/<folder>."""
    per_q = load(folder / "main")[1]
    per_q = {"auto": per_q.pop("auto"), **per_q}
    for other in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "main"):
        if (other / "results.json").exists():
            per_q[f"auto/{other.name}"] = load(other)[1]["auto"]
    return on_common_questions(per_q)


def probe_tables(auto: dict[str, dict]) -> list[str]:
    """The probe's class against the labels' (rows: labels, columns: probe), then the routes taken per source."""
    found = {i: step(r, "auto") for i, r in auto.items()}
    pairs = Counter((gold_class(auto[i]), s["tangle"]) for i, s in found.items() if s)
    right = sum(n for (gold, probed), n in pairs.items() if gold == probed)
    probed = Table(["labels \\ probe", *CLASSES],
                   [[gold, *(pairs.get((gold, p), 0) for p in CLASSES)] for gold in CLASSES
                    if any(g == gold for g, _ in pairs)])
    routes = Counter((source(auto[i]), s["route"]) for i, s in found.items() if s)
    methods = sorted({m for _, m in routes})
    routed = Table(["source", *methods],
                   [[src, *(routes.get((src, m), 0) for m in methods)] for src in sorted({s for s, _ in routes})])
    return [f"The probe agreed with the labels on {right} of {sum(pairs.values())} questions.", "",
            *probed.lines(), "", *routed.lines()]



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/auto")
    parser.add_argument("--tuned-on", type=int, default=24, help="the first N questions chose auto/tuned's routes")
    args = parser.parse_args()
    per_q = runs(args.runs)
    n = len(per_q["auto"])
    later = list(per_q["auto"])[args.tuned_on:]  # suite order: the run answered them in order
    methods_frontier(ROOT / "docs/results/auto_frontier.png", per_q, "tangle_score", "tangle score (%)",
                     "mixed dev suite")
    intro = (f"Generated by `benchmarks/auto_report.py` from `benchmarks/run_auto.sh` ({n} questions of the mixed "
             "dev suite answered by every method; `benchmarks/mixed_suite.py` says how it is drawn; data in "
             "`docs/results/auto/`). Embedded Qwen2.5-Coder-1.5B (Q4_K_M), greedy, each question's own passages. "
             "Scores in %. **tangle score**, the one score every source shares: the share of gold answers the "
             "response contains, 0 when it also contains a known wrong answer (RAMDocs' misinformation answers, "
             "conflictQA's opposite yes/no). Paired 95% bootstrap CIs of auto minus each method; LLM calls include "
             "cached ones (what a method costs) and, for auto, its probe's. **auto** is the routing table before this "
             "report (`benchmarks/auto_routes_v1.yaml`: clean concat, ambiguous corg, conflicting post-fusion, "
             "low-coverage diva, mixed corg); **auto/tuned** the one `tanglerag diagnose` chose from the first 24 "
             "questions (`benchmarks/auto_routes_dev24.yaml`), now the default; **auto/probe** answers every tangle "
             "from the probe's own per-passage reading (the `probe` route, one call in all). Both answered from the "
             "cache of the main run: the same probe calls, the same routed methods' calls.")
    lines = ["# auto on the mixed dev suite", "", intro, "", *main_table(per_q), "",
             f"## The {len(later)} questions after the first {args.tuned_on}", "",
             (f"auto/tuned's routes were chosen on the first {args.tuned_on} questions of the suite "
              "(`benchmarks/auto_routes_dev24.yaml`, from `tanglerag diagnose`); here every method on the rest only."),
             "", *main_table({m: {i: rows[i] for i in later} for m, rows in per_q.items()}), "",
             "## Tangle score by class", "", *class_table(per_q), "",
             "## Tangle score by the class auto's probe read", "", *probed_class_table(per_q), "",
             "![tangle score against LLM calls per question](auto_frontier.png)", "",
             "## What the probe read, and where auto sent each question", "", *probe_tables(per_q["auto"]), ""]
    write_report("auto", lines)


if __name__ == "__main__":
    main()
