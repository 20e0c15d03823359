"""Issue 31's comparison: text prompts vs structured outputs, per method family, on the questions every mode answered.

Reads the runs `benchmarks/run_structured.sh` wrote (docs/results/structured/NAME when finished, else the
checkpoint under runs/structured/NAME, so a run still going is reported as far as it got) and writes the
generated part of docs/results/structured.md, before the discussion in benchmarks/structured_discussion.md.
Usage: .venv/bin/python benchmarks/structured_report.py
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

from run_io import diff_text, paired_diff, write_report

from tanglerag.errors import TangleragError
from tanglerag.eval.records import Prediction
from tanglerag.eval.runs import read_run
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
MODES = ("off", "repair", "on", "default")
LABELS = {"ans": "Ans", "d_f1": "D-F1", "dr": "DR", "rouge_l": "ROUGE-L", "em": "EM", "f1": "F1"}
FAMILIES = {  # run prefix: (title, metrics shown)
    "corg": ("COrg, pairwise graph, RAMDocs dev", ("ans", "d_f1")),
    "diva": ("Diva, ASQA dev", ("d_f1", "rouge_l")),  # and DR, a run-level metric (dr_cells)
    "pf": ("Post-fusion and its fallbacks, RAMDocs dev (gold passage ensured)", ("em", "f1")),
}


def load(name: str) -> tuple[list[Prediction], bool] | None:
    """A run's predictions and whether it finished; None when it has not answered anything yet."""
    for folder in (ROOT / "docs/results/structured" / name, ROOT / "runs/structured" / name):
        if folder.is_dir():
            try:
                run = read_run(name, folder)
            except TangleragError:
                return None
            return run.predictions, run.info.finished
    return None


def unreadable(p: Prediction) -> tuple[int, int]:
    """(decisions left unreadable, decisions taken) by the method's own counters: COrg's judged pairs, Diva's
    ambiguity + interpretations + verdicts; other steps read leniently and count none."""
    left = taken = 0
    for step in p.trace.steps:
        if step.kind == "corg_graph":
            left, taken = left + step.unparsed, taken + step.pairs_judged
        elif step.kind == "diva":
            left, taken = left + step.unreadable, taken + 2 + len(step.verification)
    return left, taken


def against_text(rows: list[Prediction], text_rows: list[Prediction] | None, metric: str) -> str:
    """The metric's mean, then (for a mode other than text) its paired difference from the text run on the same
    questions with a 95% bootstrap CI, so a gain or loss can be told from noise."""
    mean = f"{100 * sum(p.metrics.get(metric) or 0.0 for p in rows) / len(rows):.1f}"
    if text_rows is None:
        return mean
    per_q = {name: {p.id: {"metrics": {metric: p.metrics.get(metric) or 0.0}} for p in preds}
             for name, preds in (("mode", rows), ("off", text_rows))}
    return f"{mean} ({diff_text(paired_diff(per_q, 'mode', 'off', metric), '')})"


def shows_dr(metrics: tuple[str, ...]) -> bool:
    return {"rouge_l", "d_f1"} <= set(metrics)


def dr_cells(rows: list[Prediction], metrics: tuple[str, ...]) -> list[str]:
    """DR, sqrt(ROUGE-L x D-F1) of the run's means (a run-level metric: no paired CI), where both are shown."""
    if not shows_dr(metrics):
        return []
    means = [sum(p.metrics.get(m) or 0.0 for p in rows) / len(rows) for m in ("rouge_l", "d_f1")]
    return [f"{100 * math.sqrt(means[0] * means[1]):.1f}"]


def row(mode: str, rows: list[Prediction], metrics: tuple[str, ...], finished: bool,
        text_rows: list[Prediction] | None) -> list[str]:
    n = len(rows)
    left, taken = (sum(x) for x in zip(*(unreadable(p) for p in rows), strict=True))
    calls = [c for p in rows for c in p.trace.calls]
    constrained = sum(c.constrained for c in calls)
    usage = {k: sum(p.usage.get(k, 0.0) for p in rows) / n for k in ("prompt_tokens", "completion_tokens",
                                                                     "model_seconds")}
    grades = Counter(s.grade for p in rows for s in p.trace.steps if s.kind == "diva" and s.grade)
    grade_text = " / ".join(str(grades.get(g, 0)) for g in ("Useful", "PartialUseful", "Useless")) if grades else "-"
    return [f"{mode}{'' if finished else ' (partial run)'}", *(against_text(rows, text_rows, m) for m in metrics),
            *dr_cells(rows, metrics), f"{left} of {taken}", f"{constrained} of {len(calls)}", grade_text,
            f"{usage['prompt_tokens']:,.0f}", f"{usage['completion_tokens']:,.0f}", f"{usage['model_seconds']:.1f}"]


def modes_of(prefix: str) -> list[str]:
    """The family's runs by mode: off, repair, on, default, then the one-stage runs (``pf-distill``: that stage on)."""
    names = {folder.name.removeprefix(f"{prefix}-") for base in ("docs/results/structured", "runs/structured")
             for folder in (ROOT / base).glob(f"{prefix}-*") if folder.is_dir()}
    return [m for m in MODES if m in names] + sorted(names - set(MODES))


def mode_label(mode: str) -> str:
    return mode if mode in MODES else f"`{mode}` on, rest off"


def family_section(prefix: str) -> list[str]:
    title, metrics = FAMILIES[prefix]
    runs = {mode: load(f"{prefix}-{mode}") for mode in modes_of(prefix)}
    present = {mode: run for mode, run in runs.items() if run is not None}
    if not present:
        return []
    common = set.intersection(*({(p.id, p.method) for p in preds} for preds, _ in present.values()))
    questions = len({qid for qid, _ in common})
    out = [f"### {title}: {questions} questions answered in every mode shown", ""]
    head = ["llm.structured", *(LABELS[m] for m in metrics), *(["DR"] if shows_dr(metrics) else []),
            "unreadable decisions", "constrained calls", "grades U / P / X", "prompt tok/q", "completion tok/q",
            "model s/q"]
    for method in sorted({m for _, m in common}):
        chosen = {mode: [p for p in preds if (p.id, p.method) in common and p.method == method]
                  for mode, (preds, _) in present.items()}
        table = Table(head, [row(mode_label(mode), chosen[mode], metrics, finished,
                                 chosen.get("off") if mode != "off" else None)
                             for mode, (_, finished) in present.items()])
        out += [f"`{method}`", "", *table.lines(), ""]
    return out


def cdit_section() -> list[str]:
    """CDIT's LLM judge per mode: the probe's own tables (its verdicts against RAMDocs' document labels), LLM rows."""
    table = Table(["llm.structured", "cmd", "correct judged inconsistent", "misinfo", "noise", "P", "R", "unreadable",
                   "s/question", "prompt tok/q", "completion tok/q", "constrained calls"])
    for mode in MODES:
        probe = ROOT / "docs/results/structured" / f"cdit-judge-{mode}.md"
        if probe.exists():
            table.extend([mode, *cells(line)[1:]] for line in probe.read_text().splitlines()
                         if line.startswith("| llm |"))
    if not table.rows:
        return []
    return ["### CDIT's LLM judge against RAMDocs' document labels (`cdit_judge_probe.py`, one call per document)", "",
            *table.lines(), ""]


def cells(line: str) -> list[str]:
    """A Markdown row's cells, as the probe wrote them (unescaped, one space either side of each)."""
    return line.removeprefix("| ").removesuffix(" |").split(" | ")


def main() -> None:
    intro = ("Generated by `benchmarks/structured_report.py` from `benchmarks/run_structured.sh` (runs in "
             "`docs/results/structured/`). Embedded Qwen2.5-Coder-1.5B (Q4_K_M), greedy; each family compares its "
             "modes on the questions all of them answered. `off`: text prompts and parsers (the default before "
             "this issue); `on`: every decision as JSON under its schema; `repair`: text first, JSON only for a "
             "reply the parser could not read in full; `default`: the shipped per-step modes "
             "(`llm.structured_stages`: each step in the mode that measured best below); \"`stage` on, rest off\": "
             "that stage's decisions as JSON, the others as text. Metrics in %; tokens and model seconds per question, all "
             "calls (the D-F1 reader excepted: it is evaluation, not the method). A mode's metric is followed by its "
             "paired difference from `off` on the same questions, in points, with a 95% bootstrap CI. "
             "\"unreadable decisions\": "
             "COrg's judged context pairs, Diva's ambiguity, interpretation and verification decisions left "
             "unread; the other steps' parsers are lenient and count none.")
    lines = ["# Structured outputs (issue 31): text prompts vs JSON under a schema", "", intro, ""]
    for prefix in FAMILIES:
        lines += family_section(prefix)
    lines += cdit_section()
    write_report("structured", lines)


if __name__ == "__main__":
    sys.exit(main())
