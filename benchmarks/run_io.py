"""Shared by the report scripts: read an eval run folder, paired bootstrap between two methods."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tanglerag.tables import Table


def load(run: Path) -> tuple[dict, dict[str, dict[str, dict]]]:
    """(results.json, predictions by method then question id), in the current format (see ``upgrade``)."""
    results = json.loads((run / "results.json").read_text())
    per_q: dict[str, dict[str, dict]] = {}
    for line in (run / "predictions.jsonl").read_text().splitlines():
        row = upgrade(json.loads(line))
        per_q.setdefault(row["method"], {})[row["id"]] = row
    if "settings" not in results:  # written before results.json kept the full settings dump
        setting = results["setting"]
        results["settings"] = {"corg": setting.get("corg", {}), "methods": {"passage_words": setting.get("passage_words")}}
    return results, per_q


def upgrade(row: dict) -> dict:
    """Rows written before the typed trace kept method decisions in an untyped ``extras`` dict (0-based
    context positions); turn the parts the reports read into trace steps named by passage id."""
    extras = row.pop("extras", None)
    if extras is None:
        return row
    ids = row["passage_ids"]
    steps: list[dict] = []
    if "graph" in extras:
        graph = extras["graph"]
        steps.append({"kind": "corg_graph", "mode": graph["mode"], "pairs_judged": graph["pairs_judged"],
                      "pairs_total": graph["pairs_total"], "unparsed": graph["unparsed"],
                      "nodes": [{"number": n["id"] + 1, "passage_id": ids[n["id"]]} for n in graph["graph"]["nodes"]],
                      "edges": [{"source": ids[min(e["source"], e["target"])], "target": ids[max(e["source"], e["target"])],
                                 "relation": e["relation"], "origin": "llm"}  # not kept in the old format
                                for e in graph["graph"]["edges"]]})
    if "groups" in extras:
        questions = extras.get("group_questions") or [""] * len(extras["groups"])
        steps.append({"kind": "groups", "strategy": "corg" if row["method"] == "corg" else row["method"],
                      "groups": [{"passage_ids": [ids[i] for i in g], "question": q}
                                 for g, q in zip(extras["groups"], questions, strict=False)]})
    if "fallback" in extras:
        steps.append({"kind": "fallback", "fired": extras["fallback"]})
    row["trace"] = {"calls": [], "steps": steps}
    return row


def step(row: dict, kind: str) -> dict | None:
    """The first trace step of this kind in a prediction row."""
    return next((s for s in row["trace"]["steps"] if s["kind"] == kind), None)


def paired_diff(per_q: dict, a: str, b: str, metric: str, samples: int = 2000, seed: int = 0):
    """Mean per-question difference a - b, its 95% bootstrap CI, and how often a wins / loses.

    Pairing on the same questions takes their difficulty out of the interval: it is the CI of the mean of the
    differences, so it comes from the one bootstrap every interval comes from (imported here: scripts that
    measure their own memory import this module for its tables)."""
    from tanglerag.metrics.bootstrap import bootstrap_ci

    ids = sorted(set(per_q[a]) & set(per_q[b]))
    diff = np.array([per_q[a][i]["metrics"][metric] - per_q[b][i]["metrics"][metric] for i in ids], dtype=float)
    low, high = bootstrap_ci(diff.tolist(), samples, seed=seed)
    return diff.mean(), low, high, int((diff > 0).sum()), int((diff < 0).sum())


def paired_text(per_q: dict, a: str, b: str, metric: str, unit: str = " points") -> str:
    """``paired_diff`` as report text, in points: "+1.8 points [-1.6, +5.9]"."""
    return diff_text(paired_diff(per_q, a, b, metric), unit)


def diff_text(diff: tuple, unit: str = " points") -> str:
    """A ``paired_diff`` result already computed, as ``paired_text`` writes it."""
    d, lo, hi = (100 * v for v in diff[:3])
    return f"{d:+.1f}{unit} [{lo:+.1f}, {hi:+.1f}]"


def write_section(path: Path, name: str, text: str) -> None:
    """Replace the ``name`` section of a shared markdown file (between HTML-comment markers), or append it, so
    scripts that write parts of one file (docs/benchmarks.md) keep each other's numbers."""
    start, end = f"<!-- section:{name} -->", f"<!-- /section:{name} -->"
    block = f"{start}\n{text.strip()}\n{end}\n"
    old = path.read_text() if path.exists() else ""
    if start in old and end in old:
        rest = old[old.index(end) + len(end):].lstrip("\n")
        new = old[:old.index(start)] + block + ("\n" + rest if rest else "")  # the blank line before the next one
    else:
        new = (old.rstrip("\n") + "\n\n" if old else "") + block
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(new)
    tmp.replace(path)


def on_common_questions(per_q: dict[str, dict[str, dict]]) -> dict[str, dict[str, dict]]:
    """Every method on the questions all of them answered (a run taken in pieces may be uneven)."""
    ids = set.intersection(*(set(rows) for rows in per_q.values()))
    return {m: {i: r for i, r in rows.items() if i in ids} for m, rows in per_q.items()}


def mean_percent(rows: list[dict], metric: str) -> float | None:
    """A metric's mean in % over the rows that have it (None when none does)."""
    values = [r["metrics"].get(metric) for r in rows if r["metrics"].get(metric) is not None]
    return 100 * float(np.mean(values)) if values else None


def usage_means(rows: list[dict]) -> tuple[float, float, float]:
    """LLM calls (cached ones too: what the method costs), prompt tokens and model seconds per question."""
    return (float(np.mean([r["usage"]["llm_calls"] + r["usage"]["cached_calls"] for r in rows])),
            float(np.mean([r["usage"]["prompt_tokens"] for r in rows])),
            float(np.mean([r["usage"]["model_seconds"] for r in rows])))


def group_table(per_q: dict[str, dict[str, dict]], groups: dict[str, Callable[[dict], bool]], metric: str,
                label: str) -> list[str]:
    """One row per group of questions (a prediction row's test): its size and each method's mean ``metric``."""
    methods = list(per_q)
    table = Table([label, "n", *methods])
    anyone = next(iter(per_q.values()))
    for name, belongs in groups.items():
        ids = [i for i, r in anyone.items() if belongs(r)]
        if ids:
            table.add(name, len(ids), *(f"{mean_percent([per_q[m][i] for i in ids], metric):.1f}" for m in methods))
    return table.lines()


def frontier_points(per_q: dict[str, dict[str, dict]], metric: str) -> list[tuple[str, float, float, float, float]]:
    """For ``frontier_plot``: each method's LLM calls per question (cached ones too: what the method costs) and its
    mean ``metric`` in % with a 95% bootstrap CI."""
    from tanglerag.metrics.bootstrap import bootstrap_ci

    points = []
    for method, rows in per_q.items():
        values = [r["metrics"][metric] for r in rows.values()]
        low, high = bootstrap_ci(values, 2000, seed=0)
        points.append((method, usage_means(list(rows.values()))[0], 100 * float(np.mean(values)), 100 * low,
                       100 * high))
    return points


def frontier_plot(path: Path, points: list[tuple[str, float, float, float, float]], xlabel: str, ylabel: str,
                  title: str) -> None:
    """A cost-quality scatter for a report: each (label, cost, score, CI low, CI high) as a point with its
    interval, labelled, written as a PNG beside the report (matplotlib, headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for label, cost, score, low, high in points:
        ax.errorbar(cost, score, yerr=[[score - low], [high - score]], fmt="o", capsize=4)
        ax.annotate(label, (cost, score), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_report(name: str, lines: list[str]) -> None:
    """docs/results/NAME.md: the generated ``lines``, then the hand-written benchmarks/NAME_discussion.md when there
    is one (the numbers are regenerated, the reading of them is not); printed too."""
    root = Path(__file__).resolve().parent.parent
    discussion = root / f"benchmarks/{name}_discussion.md"
    text = "\n".join(lines + ([discussion.read_text().strip(), ""] if discussion.exists() else []))
    (root / f"docs/results/{name}.md").write_text(text)
    print(text)


def methods_frontier(path: Path, per_q: dict[str, dict[str, dict]], metric: str, ylabel: str, suite: str) -> None:
    """A report's cost-quality plot: each method's ``metric`` with its CI against its LLM calls per question."""
    n = len(next(iter(per_q.values())))
    frontier_plot(path, frontier_points(per_q, metric), "LLM calls per question", ylabel,
                  f"{suite}, {n} questions, Qwen2.5-Coder-1.5B")
