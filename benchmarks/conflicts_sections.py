"""The sets of docs/results/conflicts.md beyond RAMDocs, and the per-half tables both report modules write.

Issue 60 asks that no figure be one a rule was fitted to: every table shows each method on the tune half, the check
half and both (`benchmarks/halves.py`: a sha256 of the seed and the question id), with the questions each half
holds; and every synthetic set shows a rule that needs no model beside the methods, so a reader sees how much of a
score the set's construction gives away. The freshness rules are `benchmarks/freshness_v2.py`'s: v1 applies them to
each question's own passages (what `--scope own` gives the methods), v2 to the top-k of each corpus variant's index.
Split from conflicts_report.py (the RAMDocs part) to keep both short; the report imports ``other_sections``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path

from halves import HALVES, cell, split
from run_io import diff_text, load, mean_percent, on_common_questions, paired_diff, usage_means

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
LABELS = {"ramdocs_strict": "strict", "answer_recall": "recall", "misinfo_leak": "leak",
          "conflict_recall": "conflict recall", "false_conflict_rate": "false conflict rate",
          "tangle_score": "tangle score", "as_of_correct": "as-of correct", "unk": "unknown"}
NO_COST = {"llm_calls": 0, "cached_calls": 0, "prompt_tokens": 0, "model_seconds": 0.0}
Rows = dict[str, dict]  # question id: prediction row
PerQ = dict[str, Rows]  # method: its rows


# ------------------------------------------------------------------------------------------------- tables by half
def by_half(rows: Rows) -> list[tuple[str, Rows]]:
    """(half, rows) for the tune half, the check half and both; a half without questions is left out."""
    parts = split(rows)
    named = [*((h, {i: rows[i] for i in parts[h]}) for h in HALVES), ("both", rows)]
    return [(h, r) for h, r in named if r]


def restrict(per_q: PerQ, ids: set[str] | list[str]) -> PerQ:
    """Every method on the given questions only."""
    keep = set(ids)
    return {m: {i: r for i, r in rows.items() if i in keep} for m, rows in per_q.items()}


def half_ids(per_q: PerQ) -> list[tuple[str, list[str]]]:
    """(half, ids) of the questions the methods share, as ``by_half`` orders them."""
    return [(h, list(rows)) for h, rows in by_half(next(iter(per_q.values())))]


def method_table(per_q: PerQ, metrics: tuple[str, ...], costs: bool = True) -> list[str]:
    """A row per method and half: the questions, each metric's mean in % and (``costs``) what a question cost."""
    extra = ["calls/q", "prompt tok/q", "model s/q"] if costs else ["calls/q"]
    table = Table(["method", "half", "n", *(LABELS.get(m, m) for m in metrics), *extra])
    for method, rows in per_q.items():
        for half, part in by_half(rows):
            values = list(part.values())
            calls, prompt, seconds = usage_means(values)
            shown = [f"{calls:.2f}", f"{prompt:,.0f}", f"{seconds:.1f}"] if costs else [f"{calls:.2f}"]
            table.add(method, half, len(values), *(cell(mean_percent(values, m)) for m in metrics), *shown)
    return table.lines()


def having(per_q: PerQ, a: str, b: str, metric: str) -> PerQ:
    """Methods a and b on the questions where both have ``metric`` (leak is defined only where a wrong answer is)."""
    ids = [i for i in per_q[a] if per_q[a][i]["metrics"].get(metric) is not None
           and per_q[b].get(i, {}).get("metrics", {}).get(metric) is not None]
    return {m: {i: per_q[m][i] for i in ids} for m in (a, b)}


def versus(per_q: PerQ, method: str, base: str, metric: str) -> str:
    """``method`` - ``base`` on ``metric``, paired, with its 95% bootstrap CI; "-" against itself or with no pair."""
    if method == base or base not in per_q or method not in per_q:
        return "-"
    pair = having(per_q, method, base, metric)
    return diff_text(paired_diff(pair, method, base, metric)) if pair[method] else "-"


def paired_by_half(per_q: PerQ, a: str, b: str, metric: str) -> str:
    """``versus`` on each half: "tune +1.0 points [...]; check ...; both ..."."""
    return "; ".join(f"{half} {versus(restrict(per_q, ids), a, b, metric)}" for half, ids in half_ids(per_q))


def no_model_rows(scores: dict[str, dict[str, float | None]]) -> Rows:
    """A rule's per-question metrics as prediction rows that cost nothing, so they share the methods' tables."""
    return {i: {"id": i, "metrics": metrics, "usage": dict(NO_COST)} for i, metrics in scores.items()}


# --------------------------------------------------------------------------------------------- no-model baselines
def _v1_stated(passage: object, example: object) -> str:
    """The answer a v1 passage states: its timeline entry (same date, answer in the text); "" for the distractor,
    which answers another question (a rule that picks it answers this one wrong)."""
    from tanglerag.text import normalize_answer

    meta = passage.metadata  # type: ignore[attr-defined]
    if meta.get("type") == "noise":
        return ""
    text = normalize_answer(passage.text)  # type: ignore[attr-defined]
    dated = [t["answer"] for t in example.metadata["timeline"] if t["date"] == meta.get("date")]  # type: ignore
    return next((a for a in dated if normalize_answer(a) in text), dated[0] if dated else "")


def freshness_v1_baseline(metrics: tuple[str, ...]) -> dict[str, Rows]:
    """freshness_v2.py's rules on each v1 question's own passages (benchmarks/data/freshness_dev.jsonl), scored by
    the run's metrics on the answer the chosen passage states."""
    from freshness_v2 import RULES

    from tanglerag.datasets.registry import load_dataset
    from tanglerag.metrics import METRICS
    from tanglerag.types import Answer, RetrievedPassage

    scores: dict[str, dict[str, dict[str, float | None]]] = {name: {} for name in RULES}
    for example in load_dataset("freshness")[1]:
        hits = [RetrievedPassage(passage=p, score=0.0, rank=r) for r, p in enumerate(example.passages)]
        for name, rule in RULES.items():
            chosen = rule(hits, example.question)
            text = _v1_stated(chosen.passage, example) if chosen is not None else ""
            answer = Answer(question=example.question, method=name, text=text, is_unknown=not text)
            scores[name][example.id] = {m: METRICS.get(m)(answer, example) for m in metrics}
    return {f"rule: {name} (no model)": no_model_rows(s) for name, s in scores.items()}


def freshness_v2_baseline(index: Path) -> dict[str, Rows] | str:
    """freshness_v2.py's ``baseline_scores`` over one corpus variant's index (MiniLM embeds the questions: no LLM);
    a sentence instead when the index is not built."""
    if not (index / "manifest.json").exists():
        return f"the rule baseline needs the index {index.relative_to(ROOT)} (freshness_v2.py's docstring builds it)"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from freshness_v2 import DATA, baseline_scores

    found = baseline_scores(DATA / "freshness_v2_dev.jsonl", index)
    return {f"rule: {name} (no model)": no_model_rows({i: {k: v for k, v in s.items() if k != "valid retrieved"}
                                                        for i, s in rows.items()}) for name, rows in found.items()}


# ----------------------------------------------------------------------------------------------------- the sections
FRESH = ("as_of_correct", "ramdocs_strict", "answer_recall", "misinfo_leak")
V2_WHAT = ("freshness v2 (benchmarks/freshness_v2.py, `benchmarks/data/freshness_v2.md`): 120 rows of 60 SituatedQA-"
           "temp questions v1 never used, passages that state the answer without quoting the question, every "
           "question's passages in one index (125 passages), top-k the default, dense MiniLM; ")
OTHER_RUNS: dict[str, tuple[str, tuple[str, ...], str]] = {  # section: (run folder, metrics, what it is)
    "conflictQA": ("conflictqa", ("ramdocs_strict", "answer_recall", "misinfo_leak", "conflict_recall",
                                  "false_conflict_rate"), (
        "conflictQA (StrategyQA half): a seeded sample of 60; as run under the rules of issue 50")),
    "Mixed suite": ("mixed", ("tangle_score", "answer_recall", "misinfo_leak", "ramdocs_strict", "conflict_recall",
                              "false_conflict_rate"), ("the mixed dev suite (benchmarks/mixed_suite.py), all 60 "
                    "(10 per class and source); goal: tangle score above concat's (docs/results/auto.md); as run under "
                    "the rules of issue 50")),
    "Freshness": ("freshness", FRESH, (
        "freshness v1 (benchmarks/freshness_set.py): a seeded sample of 100 (50 asked plainly, 50 as of a date), "
        "each question with its own passages, which quote it; the date rules were chosen on these rows; each "
        "document asked the question without its as-of clause; strict and leak count an outdated answer as wrong; "
        "the methods' rows are as run under the rules of issue 50 (not replayed under today's rules), "
        "the rule rows are today's")),
    "Freshness, documents asked with the as-of clause": ("freshness-asked-as-of", FRESH, (
        "the same 100 answered before a627952, when each document was asked the question as written, as-of clause "
        "and all (kept as run: the comparison the change was made on)")),
    "Freshness v2, dates in metadata": ("freshness-v2-meta", FRESH, V2_WHAT + "each passage's date in its metadata "
                                        "only; goal: >= 95% of as-of questions right"),
    "Freshness v2, dates in the text": ("freshness-v2-text", FRESH, V2_WHAT + "each passage's date in its text only "
                                        "(\"As of June 12, 2018, ...\"); goal: >= 95% of as-of questions right"),
    "ASQA: false conflicts where nothing is disputed": ("asqa-false", (
        "false_conflict_rate", "answer_recall", "ramdocs_strict", "unk"), (
        "ledger on 40 ASQA dev questions with two or more answers (one per interpretation) and their own passages: "
        "answers that differ because the question is ambiguous, not because a source is wrong, so every conflict "
        "the report flags is a false one")),
}
BASELINES: dict[str, Callable[[], dict[str, Rows] | str]] = {
    "freshness": lambda: freshness_v1_baseline(FRESH),
    "freshness-asked-as-of": lambda: rule_rows("freshness"),  # the same rows, asked otherwise: the same rule
    "freshness-v2-meta": lambda: freshness_v2_baseline(ROOT / "runs/freshness_v2/index-meta"),
    "freshness-v2-text": lambda: freshness_v2_baseline(ROOT / "runs/freshness_v2/index-text"),
}


@cache
def rule_rows(folder: str) -> dict[str, Rows] | str:
    """A set's no-model rows (computed once: the v2 ones embed every question), {} for a set without them."""
    return BASELINES[folder]() if folder in BASELINES else {}


def other_section(runs: Path, title: str) -> list[str]:
    """One set's section: the methods (or "not yet run") and its no-model rows, by half."""
    folder, metrics, what = OTHER_RUNS[title]
    lines = [f"## {title}", "", f"{what}.", ""]
    per_q: PerQ = {}
    if (runs / folder / "results.json").exists():
        per_q = on_common_questions(load(runs / folder)[1])
    else:
        lines += [f"Not yet run: `RUNS={folder} benchmarks/run_conflicts.sh` (the `{folder}` run).", ""]
    rules = rule_rows(folder)
    if isinstance(rules, str):
        lines += [f"No rule rows: {rules}.", ""]
    elif rules:
        ids = set(next(iter(per_q.values()))) if per_q else None
        per_q.update({name: {i: r for i, r in rows.items() if ids is None or i in ids} for name, rows in rules.items()})
        lines += [("Rows named *rule* need no model: the newest dated passage (on or before the question's \"as of\" "
                   "date), among all passages or among those that repeat most of the question's words; the answer "
                   "is what the chosen passage states."), ""]
    if not per_q:
        return lines
    lines += [*method_table(per_q, metrics), ""]
    first = metrics[0]
    if title == "conflictQA":
        lines += [conflictqa_line(per_q), ""]
    elif {"ledger", "concat"} <= set(per_q):
        lines += [(f"ledger against concat, paired, on {LABELS.get(first, first)} (95% bootstrap CI): "
                   f"{paired_by_half(per_q, 'ledger', 'concat', first)}."), ""]
    if folder.startswith("freshness-v2") and "ledger" in per_q:
        lines += misses(per_q["ledger"], ("as_of_correct", "ramdocs_strict"))
    return lines


def misses(rows: Rows, metrics: tuple[str, ...]) -> list[str]:
    """Every question of the check half the ledger got wrong on any of ``metrics``, read from its stored trace:
    the gold, the answer's lines (what it asserted, then what it set aside and why)."""
    check = split(rows)["check"]
    wrong = [rows[i] for i in check if any(rows[i]["metrics"].get(m) == 0.0 for m in metrics)]
    out = [f"The ledger's misses on the check half ({len(wrong)} of {len(check)}), from its trace:", ""]
    for row in wrong:
        said = " / ".join(line.strip() for line in row["answer"].splitlines() if line.strip())
        out.append(f"- `{row['id']}` {row['question']} (gold: {', '.join(row['gold'])}): {said}")
    return [*out, ""]


YES_NO = ({"yes", "true"}, {"no", "false"})


def decided(row: dict) -> float:
    """conflictQA's StrategyQA half: the reply says the gold yes/no word (or its alias) and not the other one. The
    gold lists the two aliases as two answers, which answer recall reads as two answers to find (at most 50%) and
    the strict score as never complete, so the report scores the decision itself."""
    words = set(row["answer"].lower().replace(",", " ").replace(".", " ").split())
    gold = {g.lower() for g in row["gold"]}
    other = next(o for g, o in (YES_NO, YES_NO[::-1]) if gold <= g)
    return float(bool(words & gold) and not words & other)


def conflictqa_line(per_q: PerQ) -> str:
    parts = []
    for half, ids in half_ids(per_q):
        rows = {m: [per_q[m][i] for i in ids if {g.lower() for g in per_q[m][i]["gold"]} in YES_NO] for m in per_q}
        parts.append(f"{half} " + ", ".join(f"{m} {100 * sum(map(decided, rs)) / len(rs):.1f}% of {len(rs)}"
                                              for m, rs in rows.items() if rs))
    return ("Decided right (the gold yes/no and not the other; the table's strict and recall read the two aliases "
            f"yes/true as two answers and are not meaningful here): {'; '.join(parts)}.")


SCENARIOS = ROOT / "docs/results/ledger_scenarios.json"


def _share(hits: list[bool]) -> str:
    return f"{sum(hits)}/{len(hits)} ({100 * sum(hits) / len(hits):.1f}%)" if hits else "not scored"


def scenarios_section() -> list[str]:
    """Per method, how many of the 60 scenarios' answers lead with the right value, get everything right, and
    write the right report kind, from the suite's JSON; the misses are in its Markdown."""
    lines = ["## Scenarios (issue 60's suite)", "",
             ("[docs/results/ledger_scenarios.md](ledger_scenarios.md): small document sets a person could have "
              "(tests/data/ledger_scenarios.yaml, `benchmarks/ledger_scenarios.py`), each answered from its own "
              "documents. Not split into halves: the rules were written against the whole suite (its canned run is "
              "in the test command), so it is no held-out set; the misses are listed there."), ""]
    if not SCENARIOS.exists():
        return [*lines, ("Not yet run on the model: `benchmarks/ledger_scenarios.py --methods ledger,concat,rule` "
                         "writes docs/results/ledger_scenarios.md and .json."), ""]
    results = json.loads(SCENARIOS.read_text())
    outcomes = results["outcomes"]
    table = Table(["method", "scenarios", "lead right", "all right", "report right", "not answered (errors)"])
    for method in dict.fromkeys(o["method"] for o in outcomes):
        mine = [o for o in outcomes if o["method"] == method]
        reports = [o["report_right"] for o in mine if o["report_right"] is not None]
        table.add(method, len(mine), _share([o["lead_right"] for o in mine]), _share([o["all_right"] for o in mine]),
                  _share(reports), sum(bool(o["error"]) for o in mine))
    cases = Counter(o["case"] for o in outcomes if o["method"] == outcomes[0]["method"])
    model = "canned claims (no model)" if results.get("canned") else "the model of the run's settings"
    return [*lines, f"`{results['command']}`, {model}; cases: "
            + ", ".join(f"{c} {n}" for c, n in cases.items()) + ".", "", *table.lines(), ""]


def freshness_reading(runs: Path) -> list[str]:
    """For the Reading: each freshness set's as-of share, the ledger's by half beside the best no-model rule's."""
    lines = []
    for title, (folder, _, _) in OTHER_RUNS.items():
        if not folder.startswith("freshness") or "asked" in folder:
            continue
        rules = rule_rows(folder)
        per_q = on_common_questions(load(runs / folder)[1]) if (runs / folder / "results.json").exists() else {}
        if not isinstance(rules, str):
            ids = set(next(iter(per_q.values()))) if per_q else None
            per_q.update({n: {i: r for i, r in rows.items() if ids is None or i in ids} for n, rows in rules.items()})
        shown = [m for m in per_q if m == "ledger" or m.startswith("rule: ")]
        if not shown:
            continue
        parts = [f"{m} " + ", ".join(f"{h} {cell(mean_percent(list(r.values()), 'as_of_correct'))}"
                                     for h, r in by_half(per_q[m])) for m in shown]
        ran = "" if "ledger" in per_q else " (methods not yet run)"
        lines.append(f"- **{title}**{ran}, as-of questions answered right: " + "; ".join(parts) + ".")
    return lines


def other_sections(runs: Path) -> list[str]:
    return [*(line for title in OTHER_RUNS for line in other_section(runs, title)), *scenarios_section()]
