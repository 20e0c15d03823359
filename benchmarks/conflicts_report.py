"""Issues 50 and 60's report: the ledger beside the peers on RAMDocs dev, then the other sets, each by half.

Reads `benchmarks/run_conflicts.sh` runs (docs/results/conflicts/<name>), the replays of today's rules, their
ablations and the threshold grid on the stored claims (`benchmarks/ledger_replay.py`, docs/results/conflicts/replay/
<variant>) and the stored peers runs on the same question ids (docs/results/peers/main, `separate` included, and
answer-each), and writes docs/results/conflicts.md and docs/results/conflicts_frontier.png (strict score against
misinformation leak, points sized by LLM calls per question). Every table shows the tune half, the check half and
both (`benchmarks/halves.py`); the goal is read on the check half, the thresholds were chosen on the tune half, and
the grid they were chosen on is shown so a reader can redo the choice. The sets beyond RAMDocs, their no-model
rule rows and the scenario suite are `conflicts_sections.py`'s. A run whose folder is missing is listed as not yet
run. Every number in the prose is computed here.
Usage: .venv/bin/python benchmarks/conflicts_report.py [--runs docs/results/conflicts] [--peers docs/results/peers]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from conflicts_sections import (
    LABELS,
    PerQ,
    by_half,
    cell,
    freshness_reading,
    half_ids,
    method_table,
    other_sections,
    paired_by_half,
    restrict,
    versus,
)
from halves import split
from ledger_replay import GRID_OVERLAP, GRID_RELEVANCE, grid_name
from run_io import load, mean_percent, on_common_questions, step, usage_means, write_report

from tanglerag.methods.ledger.config import LedgerConfig
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
LEDGER_RUNS = {"replay/default": "ledger", "replay/same-thing-versions": "ledger, same_thing=versions",
               "replay/verify-separate": "ledger, claims_from=separate",
               "ledger": "ledger, earlier rules (as run)",
               "ledger-prior": "ledger-prior, earlier rules (as run)"}  # run folder: name in the report
OURS = {"vetted": "vetted"}  # runs of our other methods under docs/results/conflicts: folder (and method): name
DEFAULT = "ledger"
VERIFY = LEDGER_RUNS["replay/verify-separate"]
PEERS = {"main": {"concat": "concat", "separate": "separate", "corg": "corg", "madam-rag": "madam-rag",
                  "astute-rag": "astute-rag"},
         "answer-each": {"corg": "corg-answer-each"}}  # peers run folder: {method: name in the report}
BASELINES = ("corg-answer-each", "madam-rag")
METRICS = ("ramdocs_strict", "answer_recall", "misinfo_leak", "conflict_recall", "false_conflict_rate")
GOAL = {"strict": 38.0, "leak": 33.0, "calls": 6.0, "conflict recall": 80.0, "false conflict rate": 20.0}
GRID_LEAK = 33.0  # the declared rule: the most strict cell with leak <= 33% on the tune half
GRID_PREFIX = "ledger: grid-"


def predictions(runs: Path, peers: Path) -> tuple[PerQ, list[str]]:
    """Per method, per question id, on the questions every method answered; and the runs not found."""
    per_q: PerQ = {}
    missing = []
    for folder, name in LEDGER_RUNS.items():
        if (runs / folder / "results.json").exists():
            per_q[name] = load(runs / folder)[1]["ledger"]
        else:
            missing.append(f"{name} (docs/results/conflicts/{folder})")
    per_q.update(replays(runs))
    for folder, name in OURS.items():
        if (runs / folder / "results.json").exists():
            per_q[name] = load(runs / folder)[1][folder]
        else:
            missing.append(f"{name} (docs/results/conflicts/{folder})")
    for folder, names in PEERS.items():
        if (peers / folder / "results.json").exists():
            rows = load(peers / folder)[1]
            per_q.update({name: rows[method] for method, name in names.items() if method in rows})
        else:
            missing.append(f"peers {folder} (docs/results/peers/{folder})")
    return on_common_questions(per_q), missing


def replays(runs: Path) -> PerQ:
    """The variants replayed on the stored claims, named ``ledger: <variant>`` (the default and versions are main
    rows already; concat-report has its own section)."""
    shown = {Path(f).name for f in LEDGER_RUNS if f.startswith("replay/")} | {"concat-report"}
    return {f"ledger: {run.name}": load(run)[1]["ledger"] for run in sorted((runs / "replay").glob("*"))
            if run.name not in shown and (run / "results.json").exists()}


def main_rows(per_q: PerQ) -> PerQ:
    return {m: rows for m, rows in per_q.items() if not m.startswith("ledger: ")}


def counts_line(per_q: PerQ) -> str:
    parts = []
    for half, ids in half_ids(per_q):
        defined = [f"{LABELS[m]} n={sum(per_q[name][i]['metrics'].get(m) is not None for i in ids)}"
                   for m, name in (("misinfo_leak", "concat"), ("conflict_recall", DEFAULT),
                                   ("false_conflict_rate", DEFAULT)) if name in per_q]
        parts.append(f"{half} {len(ids)} ({', '.join(defined)})")
    return "Questions per half, and those a metric is defined on: " + "; ".join(parts) + "."


def paired_table(per_q: PerQ) -> list[str]:
    pairs = [(b, m) for b in BASELINES for m in ("ramdocs_strict", "misinfo_leak")]
    table = Table(["method", "half", *(f"{LABELS[m]} vs {b} [95% CI]" for b, m in pairs)])
    for half, ids in half_ids(per_q):
        part = restrict(per_q, ids)
        for method in per_q:
            table.add(method, half, *(versus(part, method, b, m) for b, m in pairs))
    return table.lines()


def goal_checks(values: list[dict]) -> dict[str, tuple[float | None, bool]]:
    """Each part of the RAMDocs goal: the value and whether it is met (a method without reports misses the
    conflict parts)."""
    got = {"strict": mean_percent(values, "ramdocs_strict"), "leak": mean_percent(values, "misinfo_leak"),
           "calls": usage_means(values)[0], "conflict recall": mean_percent(values, "conflict_recall"),
           "false conflict rate": mean_percent(values, "false_conflict_rate")}
    low = ("leak", "calls", "false conflict rate")
    return {k: (v, v is not None and (v <= GOAL[k] if k in low else v >= GOAL[k])) for k, v in got.items()}


def verdict(checks: dict[str, tuple[float | None, bool]]) -> str:
    missed = [k for k, (_, ok) in checks.items() if not ok]
    return "reached" if not missed else "missed on " + ", ".join(missed)


def goal_table(per_q: PerQ) -> list[str]:
    table = Table(["method", "half", "n", "strict >= 38", "leak <= 33%", "calls <= 6", "conflict recall >= 80%",
                   "false conflict rate <= 20%", "goal"])
    for method, rows in per_q.items():
        for half, part in by_half(rows):
            checks = goal_checks(list(part.values()))
            shown = [f"{v:.1f} {'yes' if ok else 'no'}" if v is not None else "- (no report)"
                     for v, ok in checks.values()]
            table.add(method, f"**{half}**" if half == "check" else half, len(part), *shown, verdict(checks))
    return table.lines()


def frontier(path: Path, per_q: PerQ) -> None:
    """Strict score against misinformation leak (the goal's corner: up and left), each point sized by its
    method's LLM calls per question and labelled with them; the goal's box drawn dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for number, (method, rows) in enumerate(per_q.items()):
        values = list(rows.values())
        strict, leak = mean_percent(values, "ramdocs_strict"), mean_percent(values, "misinfo_leak")
        calls = usage_means(values)[0]
        ax.scatter(leak, strict, s=40 * calls, alpha=0.6)
        ax.annotate(f"{method} ({calls:.1f} calls)", (leak, strict), textcoords="offset points", fontsize=7,
                    xytext=(6, 4 if number % 2 == 0 else -10))  # alternate above and below: neighbours overlap
    ax.axhline(GOAL["strict"], linestyle="--", color="grey", linewidth=0.8)
    ax.axvline(GOAL["leak"], linestyle="--", color="grey", linewidth=0.8)
    ax.set_xlabel("misinformation leak (%, lower is better)")
    ax.set_ylabel("RAMDocs strict score (%)")
    n = len(next(iter(per_q.values())))
    ax.set_title(f"RAMDocs dev, {n} questions (both halves), Qwen2.5-Coder-1.5B\npoint area ~ LLM calls/q; goal: "
                 "upper left of the dashed lines", fontsize=8)
    ax.margins(x=0.25, y=0.1)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ---------------------------------------------------------------------------------------- thresholds and ablations
def grid_scores(per_q: PerQ, half: str) -> dict[tuple[float, float], dict[str, float | None]]:
    """Each grid cell's metric means in % on one half (tune, check or both)."""
    scores = {}
    for r in GRID_RELEVANCE:
        for o in GRID_OVERLAP:
            rows = per_q.get(f"ledger: {grid_name(r, o)}")
            if rows is None:
                continue
            ids = list(rows) if half == "both" else split(rows)[half]
            scores[(r, o)] = {m: mean_percent([rows[i] for i in ids], m) for m in METRICS} | {"n": len(ids)}
    return scores


def grid_choice(tune: dict[tuple[float, float], dict[str, float | None]]) -> tuple[float, float] | None:
    """The declared rule on the tune half: the most strict cell with leak <= 33% (fewer false conflicts, then
    more conflict recall, break a tie)."""
    allowed = [c for c, s in tune.items() if s["misinfo_leak"] is not None and s["misinfo_leak"] <= GRID_LEAK]
    return max(allowed, key=lambda c: (tune[c]["ramdocs_strict"], -tune[c]["false_conflict_rate"],
                                       tune[c]["conflict_recall"]), default=None)


def grid_tune_table(tune: dict[tuple[float, float], dict], chosen: tuple[float, float] | None,
                    today: tuple[float, float]) -> list[str]:
    """The grid on the tune half with the rule's columns, the cell it picks and the cell in today's defaults."""
    table = Table(["relevance", "description overlap", "n", "strict", "leak", "false conflict rate",
                   "conflict recall", "leak <= 33%", "cell"])
    for (r, o), s in tune.items():
        marks = [m for m, on in (("the rule's choice", (r, o) == chosen), ("today's default", (r, o) == today)) if on]
        allowed = s["misinfo_leak"] is not None and s["misinfo_leak"] <= GRID_LEAK
        table.add(r, o, s["n"], *(cell(s[m]) for m in ("ramdocs_strict", "misinfo_leak", "false_conflict_rate",
                                                       "conflict_recall")), "yes" if allowed else "no", ", ".join(marks))
    return table.lines()


def grid_held_out(per_q: PerQ) -> list[str]:
    """The same cells on the check half (not used for the choice) and on both, with a sentence on check."""
    table = Table(["relevance", "description overlap", "half", "n", *(LABELS[m] for m in METRICS)])
    for half in ("check", "both"):
        for (r, o), s in grid_scores(per_q, half).items():
            table.add(r, o, half, s["n"], *(cell(s[m]) for m in METRICS))
    check = grid_scores(per_q, "check")
    leaks = sorted({round(s["misinfo_leak"], 1) for s in check.values() if s["misinfo_leak"] is not None})
    spread = f"is {leaks[0]:.1f}% in every cell" if len(leaks) == 1 else f"runs {leaks[0]:.1f}-{leaks[-1]:.1f}%"
    top = max(s["ramdocs_strict"] or 0.0 for s in check.values())
    best = " and ".join(f"{r}/{o}" for (r, o), s in check.items() if (s["ramdocs_strict"] or 0.0) == top)
    return [("The same cells on the check half (not used for the choice) and on both: on check the leak "
             f"{spread} across the grid, and the most strict (relevance/overlap) is {best}, at {top:.1f}."), "",
            *table.lines(), ""]


def grid_lines(per_q: PerQ) -> list[str]:
    tune = grid_scores(per_q, "tune")
    if not tune:
        return ["Not yet replayed: `benchmarks/ledger_replay.py` (the `grid-*` variants).", ""]
    config, chosen = LedgerConfig(), grid_choice(tune)
    today = (config.relevance, config.description_overlap)
    low_false = [c for c, s in tune.items() if (s["false_conflict_rate"] or 0.0) <= GOAL["false conflict rate"]]
    picked = (f"The rule picks relevance {chosen[0]}, overlap {chosen[1]}; today's default is relevance {today[0]}, "
              f"overlap {today[1]}" + (" (the same cell)." if chosen == today else " (another cell).")
              if chosen else f"No cell has leak <= {GRID_LEAK:.0f}% on the tune half.")
    return [("`ledger.relevance` and `ledger.description_overlap` were chosen on the RAMDocs tune half only, by "
             "replaying the stored claims over the grid below with every other rule at today's default. The "
             f"declared rule: the most strict cell with leak <= {GRID_LEAK:.0f}% (cells with a false conflict rate "
             f"<= 20% on tune, the goal's other bound: {len(low_false)} of {len(tune)}). Computed here from the "
             "replays:"), "", *grid_tune_table(tune, chosen, today), "", picked, "", *grid_held_out(per_q)]


def deciders(rows: list[dict]) -> tuple[Counter[str], Counter[str], int]:
    """From the ledger's trace: which policy settled each dispute, the kinds of the reports, and the questions whose
    claims were read as copies of another document."""
    decided: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    copies = 0
    for row in rows:
        trace = step(row, "conflicts") or {}
        copies += bool(trace.get("copies"))
        for report in trace.get("reports", []):
            kinds[report["kind"]] += 1
            settled = next((t["policy"] for t in report.get("trials", []) if t["decided"]), None)
            if report.get("trials"):
                decided[settled or "none"] += 1
    return decided, kinds, copies


def defaults_text() -> str:
    config = LedgerConfig()
    return (f"`ledger.policies=[{', '.join(config.policies)}]`, `show_disputed={config.show_disputed}`, "
            f"`same_thing={config.same_thing}`, `relevance={config.relevance}`, "
            f"`description_overlap={config.description_overlap}`, `about_similarity={config.about_similarity}`, "
            f"`duplicate_similarity={config.duplicate_similarity}`")


def ablation_lines(per_q: PerQ) -> list[str]:
    variants = [m for m in per_q if m.startswith("ledger") and not m.startswith(GRID_PREFIX)]
    scores = Table(["variant (replayed)", "half", "n", *(LABELS[m] for m in METRICS), "calls/q",
                    f"strict vs {DEFAULT} [95% CI]", f"leak vs {DEFAULT} [95% CI]"])
    traces = Table(["run", "half", "disputes", "settled by (policy: disputes)", "report kinds",
                    "questions with copies"])
    for half, ids in half_ids(per_q):
        part = restrict(per_q, ids)
        for name in variants:
            values = list(part[name].values())
            scores.add(name, half, len(values), *(cell(mean_percent(values, m)) for m in METRICS),
                       f"{usage_means(values)[0]:.2f}", versus(part, name, DEFAULT, "ramdocs_strict"),
                       versus(part, name, DEFAULT, "misinfo_leak"))
            decided, kinds, copies = deciders(values)
            traces.add(name, half, sum(decided.values()), ", ".join(f"{p}: {c}" for p, c in decided.most_common()),
                       ", ".join(f"{k}: {c}" for k, c in kinds.most_common()), copies)
    lines = [(f"Each variant changes one thing of today's default ({defaults_text()}), replayed by "
              "`benchmarks/ledger_replay.py` on the claims the stored `ledger` run read (every call answered from "
              "its trace: no model involved, the same claims for every variant; costs are the stored calls'). The "
              "rows marked *as run* were answered by the model under the rules of their time (each folder's "
              "run.json). The `prior` policy cannot be replayed under today's rules (they reach it in questions the "
              "stored prior run never asked it); its row is the earlier run's."), "", *scores.lines(), "",
             ("Which policy settled each dispute, from the ledger's trace (a dispute is a set of differing answers "
              "about one thing; the first policy in `ledger.policies` that decides it settles it):"), "",
             *traces.lines(), ""]
    earlier, prior = LEDGER_RUNS["ledger"], LEDGER_RUNS["ledger-prior"]
    if earlier in per_q and prior in per_q:
        strict, leak = (paired_by_half(per_q, prior, earlier, m) for m in ("ramdocs_strict", "misinfo_leak"))
        lines += [("The `prior` policy (one closed-book call) added before show-all, under the earlier rules "
                   f"(ledger-prior against ledger as run, paired): strict {strict}; leak {leak}."), ""]
    return lines


def report_section(runs: Path) -> list[str]:
    head = ["## Conflict reports for another method (concat with `conflicts.report=true`)", "",
            ("Concat's stored answers on the same 100 questions (docs/results/peers/main) with the conflict report "
             "post-step on the passages each answer used, replayed by `benchmarks/ledger_replay.py concat-report` "
             "(concat's call and the report's claim calls answered from the stored traces, today's rules). The "
             "report does not change the answer: its strict score and leak are concat's; it adds the conflict "
             "flags, for one call per passage."), ""]
    if not (runs / "replay/concat-report/results.json").exists():
        return [*head, "Not yet replayed: `benchmarks/ledger_replay.py concat-report`.", ""]
    per_q = on_common_questions(load(runs / "replay/concat-report")[1])
    return [*head, *method_table(per_q, METRICS, costs=False), ""]


# ------------------------------------------------------------------------------------------------------ the prose
def _half_values(rows: dict[str, dict], half: str) -> list[dict]:
    return list(rows.values()) if half == "both" else [rows[i] for i in split(rows)[half]]


def reading(per_q: PerQ, runs: Path) -> list[str]:
    """What the tables say, every number computed from them."""
    main = main_rows(per_q)
    ledger = {h: goal_checks(_half_values(main[DEFAULT], h)) for h in ("tune", "check", "both")}
    reached = [m for m in main if verdict(goal_checks(_half_values(main[m], "check"))) == "reached"]
    lines = ["## Reading", "",
             (f"- **The RAMDocs goal, read on the check half** ({len(split(main[DEFAULT])['check'])} questions): "
              f"the ledger {verdict(ledger['check'])} (strict {cell(ledger['check']['strict'][0])}, leak "
              f"{cell(ledger['check']['leak'][0])}%, {ledger['check']['calls'][0]:.2f} calls, conflict recall "
              f"{cell(ledger['check']['conflict recall'][0])}%, false conflict rate "
              f"{cell(ledger['check']['false conflict rate'][0])}%); methods that reach it on check: "
              f"{', '.join(reached) or 'none'}."),
             (f"- **Tune against check** (the ledger, today's rules): strict {cell(ledger['tune']['strict'][0])} -> "
              f"{cell(ledger['check']['strict'][0])}, leak {cell(ledger['tune']['leak'][0])}% -> "
              f"{cell(ledger['check']['leak'][0])}%, false conflict rate "
              f"{cell(ledger['tune']['false conflict rate'][0])}% -> {cell(ledger['check']['false conflict rate'][0])}%"
              f", conflict recall {cell(ledger['tune']['conflict recall'][0])}% -> "
              f"{cell(ledger['check']['conflict recall'][0])}%.")]
    if "separate" in main:
        lines.append(f"- **`separate`** (one call per document, the peers run): strict against the ledger, paired: "
                     f"{paired_by_half(main, 'separate', DEFAULT, 'ramdocs_strict')}; leak "
                     f"{paired_by_half(main, 'separate', DEFAULT, 'misinfo_leak')}.")
    if VERIFY in main:
        lines.append(f"- **Recall and rejection** (`{VERIFY}`: the claims are `separate`'s answer for each document "
                     f"alone, then the ledger's rules; the same calls as `separate`, replayed from its stored run): "
                     f"strict against the ledger, paired: {paired_by_half(main, VERIFY, DEFAULT, 'ramdocs_strict')};"
                     f" leak {paired_by_half(main, VERIFY, DEFAULT, 'misinfo_leak')}; against `separate` itself: "
                     f"strict {paired_by_half(main, VERIFY, 'separate', 'ramdocs_strict')}, leak "
                     f"{paired_by_half(main, VERIFY, 'separate', 'misinfo_leak')}.")
    return [*lines, *freshness_reading(runs), ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/conflicts")
    parser.add_argument("--peers", type=Path, default=ROOT / "docs/results/peers")
    args = parser.parse_args()
    per_q, missing = predictions(args.runs, args.peers)
    main_q = main_rows(per_q)
    frontier(ROOT / "docs/results/conflicts_frontier.png", main_q)
    intro = ("Generated by `benchmarks/conflicts_report.py` from `benchmarks/run_conflicts.sh` (data in "
             "`docs/results/conflicts/`), the replays of `benchmarks/ledger_replay.py` and the stored peers runs of "
             "`benchmarks/run_peers.sh` on the same question ids (`docs/results/peers/`). RAMDocs dev, the peers "
             "sample; embedded Qwen2.5-Coder-1.5B (Q4_K_M), greedy, each question's own documents (at most 10). "
             "Scores in %. **strict**: every gold answer and no wrong one; **recall**: share of gold answers "
             "present; **leak**: a misinformation answer present, over the questions that list one; **conflict "
             "recall** / **false conflict rate**: the conflict report flags a conflict where the documents hold a "
             "wrong answer / where they hold none (only methods that write reports have them). Calls include cached "
             "ones (what the method costs). The ledger's answer ends with `Set aside:` lines (the sides it set "
             "aside, with why); the metrics score the lines before them. **Halves**: every set is split by "
             "`benchmarks/halves.py` (sha256 of seed 0 and the question id) into a *tune* half, on which rules and "
             "thresholds are chosen, and a *check* half, on which the goal is read; each table shows tune, check "
             "and both.")
    if missing:
        intro += " Not found: " + "; ".join(missing) + "."
    lines = ["# Conflicts: the ledger beside the peers (issues 50 and 60)", "", intro, "", counts_line(per_q), "",
             *method_table(main_q, METRICS), "",
             "## Paired differences (95% bootstrap CI, in points; leak over the questions both have it)", "",
             *paired_table(main_q), "",
             "![strict score against misinformation leak, sized by calls](conflicts_frontier.png)", "",
             ("## The goal (strict >= 38 and leak <= 33% at <= 6 calls; conflict recall >= 80% with false conflict "
              "rate <= 20%), read on the check half"), "", *goal_table(main_q), "",
             "## How the two thresholds were chosen (tune half)", "", *grid_lines(per_q),
             "## Policy ablations", "", *ablation_lines(per_q),
             *report_section(args.runs), *other_sections(args.runs), *reading(per_q, args.runs)]
    write_report("conflicts", lines)


if __name__ == "__main__":
    main()
