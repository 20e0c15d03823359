"""Write eval outputs: results JSON (both runners), per-question predictions JSONL, a markdown table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from tanglerag.eval.records import EvalReport, Prediction
from tanglerag.fileio import atomic_write_text as atomic_write
from tanglerag.tables import Table

OUTPUT_FILES = ("results.json", "predictions.jsonl", "results.md")
"""What ``write_outputs`` writes into a run folder (``eval --restart`` removes them with the run)."""
RATE_METRICS = {"accuracy", "em", "f1", "unk", "nm", "misled", "cited", "ans", "ent", "ear", "d_f1", "rouge_l", "dr"}
CI_METRICS = {"accuracy", "em", "f1", "ans", "ent", "ear", "d_f1", "rouge_l"}


def markdown_table(report: EvalReport) -> str:
    """``results.md``: what was run, the results table, and the questions that failed."""
    return "\n".join([report_caption(report), "", *results_table(report).lines(), *failure_lines(report)]) + "\n"


def report_caption(report: EvalReport) -> str:
    """The line above the table: dataset, size and protocol, and how the cells read."""
    setting = ", ".join(f"{k}={v}" for k, v in report.protocol.items())
    return (f"Dataset `{report.dataset}`, n = {report.n} ({setting}). Rates in %; "
            "accuracy/EM/F1/Ans/Ent/EAR/D-F1/ROUGE-L with 95% bootstrap CI.")


def results_table(report: EvalReport) -> Table:
    """One row per method: its metrics (with CIs where they apply), then its cost per question."""
    metric_names = list(report.results[0].metrics) if report.results else []
    table = Table(["method", *metric_names, "calls/q", "prompt tok/q", "compl. tok/q", "model s/q", "wall s/q"])
    for result in report.results:
        u = result.usage
        table.add(result.method, *(_format_metric(name, result.metrics[name], result.ci.get(name))
                                   for name in metric_names),
                  f"{u['llm_calls'] + u['cached_calls']:.2f}", f"{u['prompt_tokens']:.0f}",
                  f"{u['completion_tokens']:.1f}", f"{u.get('model_seconds', 0.0):.2f}", f"{u['seconds']:.2f}")
    return table


def failure_lines(report: EvalReport) -> list[str]:
    """After a blank line, the failed questions (the first five named); none when every question was scored."""
    if not report.failed:
        return []
    shown = "; ".join(f"{f.id}: {f.error}" for f in report.failed[:5])
    more = f" (and {len(report.failed) - 5} more, in results.json)" if len(report.failed) > 5 else ""
    return ["", f"{len(report.failed)} question(s) failed and are not scored: {shown}{more}"]


def _format_metric(name: str, value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    scale = 100 if name in RATE_METRICS or name.startswith("mrecall@") else 1
    digits = 1 if scale == 100 else 3
    text = f"{scale * value:.{digits}f}"
    if ci is not None and name in CI_METRICS:
        text += f" [{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"
    return text


class Reported(Protocol):
    def to_output(self) -> dict[str, Any]: ...


def results_json(report: Reported) -> str:
    """``results.json`` as written and as ``eval --json`` prints it, for either runner's report."""
    return json.dumps(report.to_output(), indent=2) + "\n"


def write_outputs(out: Path, report: EvalReport, predictions: list[Prediction]) -> None:
    results, predictions_file, table = (out / name for name in OUTPUT_FILES)
    atomic_write(results, results_json(report))
    atomic_write(predictions_file, "".join(p.model_dump_json() + "\n" for p in predictions))
    atomic_write(table, markdown_table(report))
