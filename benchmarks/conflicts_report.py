"""Issue 50's report: the ledger beside the peers on RAMDocs dev, and the conflictQA, mixed-suite and freshness runs.

Reads `benchmarks/run_conflicts.sh` runs (docs/results/conflicts/<name>), the replays of today's rules and their
ablations on the stored claims (`benchmarks/ledger_replay.py`, docs/results/conflicts/replay/<variant>) and the stored
peers runs on the same question ids (docs/results/peers/main and answer-each), and writes docs/results/conflicts.md (tables, paired CIs, the goal,
what the ledger's traces say) and docs/results/conflicts_frontier.png (strict score against misinformation leak,
points sized by LLM calls per question). A run whose folder is missing is listed as not yet run.
Usage: .venv/bin/python benchmarks/conflicts_report.py [--runs docs/results/conflicts] [--peers docs/results/peers]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from run_io import diff_text, load, mean_percent, on_common_questions, paired_diff, step, usage_means, write_report

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
LEDGER_RUNS = {"replay/default": "ledger", "replay/same-thing-versions": "ledger, same_thing=versions",
               "ledger": "ledger, earlier rules (as run)",
               "ledger-prior": "ledger-prior, earlier rules (as run)"}  # run folder: name in the report
DEFAULT = "ledger"
PEERS = {"main": {"concat": "concat", "corg": "corg", "madam-rag": "madam-rag", "astute-rag": "astute-rag"},
         "answer-each": {"corg": "corg-answer-each"}}  # peers run folder: {method: name in the report}
BASELINES = ("corg-answer-each", "madam-rag")
METRICS = ("ramdocs_strict", "answer_recall", "misinfo_leak", "conflict_recall", "false_conflict_rate")
LABELS = {"ramdocs_strict": "strict", "answer_recall": "recall", "misinfo_leak": "leak",
          "conflict_recall": "conflict recall", "false_conflict_rate": "false conflict rate",
          "tangle_score": "tangle score", "as_of_correct": "as-of correct"}
GOAL = {"strict": 38.0, "leak": 33.0, "calls": 6.0, "conflict_recall": 80.0, "false_conflict_rate": 20.0}
OTHER_RUNS = {  # section: (run folder, metrics, what it is)
    "conflictQA": ("conflictqa", ("ramdocs_strict", "answer_recall", "misinfo_leak", "conflict_recall",
                                  "false_conflict_rate"), "conflictQA (StrategyQA half): a seeded sample of 60"),
    "Mixed suite": ("mixed", ("tangle_score", "answer_recall", "misinfo_leak", "ramdocs_strict", "conflict_recall",
                              "false_conflict_rate"), ("the mixed dev suite (benchmarks/mixed_suite.py), all 60 "
                    "(10 per class and source); goal: tangle score above concat's 38.2 (docs/results/auto.md)")),
    "Freshness": ("freshness", ("as_of_correct", "ramdocs_strict", "answer_recall", "misinfo_leak"), (
                  "the freshness set (benchmarks/freshness_set.py): a seeded sample of 100 (50 asked plainly, 50 as "
                  "of a date), each document asked the question without its as-of clause; strict and leak count an "
                  "outdated answer as wrong; goal: >= 95% of as-of questions answered with the answer valid then")),
    "Freshness, documents asked with the as-of clause": ("freshness-asked-as-of", (
        "as_of_correct", "ramdocs_strict", "answer_recall", "misinfo_leak"), (
        "the same 100 answered before a627952, when each document was asked the question as written, as-of clause "
        "and all (kept as run: the comparison the change was made on)")),
}


def predictions(runs: Path, peers: Path) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """Per method, per question id, on the questions every method answered; and the runs not found."""
    per_q: dict[str, dict[str, dict]] = {}
    missing = []
    for folder, name in LEDGER_RUNS.items():
        if (runs / folder / "results.json").exists():
            per_q[name] = load(runs / folder)[1]["ledger"]
        else:
            missing.append(f"{name} (docs/results/conflicts/{folder})")
    per_q.update(replays(runs))
    for folder, names in PEERS.items():
        if (peers / folder / "results.json").exists():
            rows = load(peers / folder)[1]
            per_q.update({name: rows[method] for method, name in names.items() if method in rows})
        else:
            missing.append(f"peers {folder} (docs/results/peers/{folder})")
    return on_common_questions(per_q), missing


def replays(runs: Path) -> dict[str, dict[str, dict]]:
    """The ablation variants replayed on the stored claims, named ``ledger: <variant>`` (the default and versions
    are main rows already)."""
    folder = runs / "replay"
    shown = {Path(f).name for f in LEDGER_RUNS if f.startswith("replay/")}
    return {f"ledger: {run.name}": load(run)[1]["ledger"] for run in sorted(folder.glob("*"))
            if run.name not in shown and run.name != "concat-report" and (run / "results.json").exists()}


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def having(per_q: dict[str, dict[str, dict]], a: str, b: str, metric: str) -> dict[str, dict[str, dict]]:
    """Methods a and b on the questions where both have ``metric`` (leak is defined only where a wrong answer is)."""
    ids = [i for i in per_q[a] if per_q[a][i]["metrics"].get(metric) is not None
           and per_q[b][i]["metrics"].get(metric) is not None]
    return {m: {i: per_q[m][i] for i in ids} for m in (a, b)}


def versus(per_q: dict[str, dict[str, dict]], method: str, base: str, metric: str) -> str:
    if method == base or base not in per_q:
        return "-"
    pair = having(per_q, method, base, metric)
    return diff_text(paired_diff(pair, method, base, metric)) if pair[method] else "-"


def main_rows(per_q: dict[str, dict[str, dict]]) -> dict[str, dict[str, dict]]:
    return {m: rows for m, rows in per_q.items() if not m.startswith("ledger: ")}


def main_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    table = Table(["method", *(LABELS[m] for m in METRICS), "calls/q", "prompt tok/q", "model s/q"])
    for method, rows in per_q.items():
        values = list(rows.values())
        calls, prompt, seconds = usage_means(values)
        table.add(method, *(cell(mean_percent(values, m)) for m in METRICS), f"{calls:.2f}", f"{prompt:,.0f}",
                  f"{seconds:.1f}")
    return table.lines()


def counts_line(per_q: dict[str, dict[str, dict]]) -> str:
    anyone = next(iter(per_q.values()))
    parts = [f"{LABELS[m]} n={sum(r['metrics'].get(m) is not None for r in per_q[name].values())}"
             for m, name in (("misinfo_leak", "concat"), ("conflict_recall", "ledger"),
                             ("false_conflict_rate", "ledger")) if name in per_q]
    return f"{len(anyone)} questions; questions a metric is defined on: " + ", ".join(parts) + "."


def paired_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    table = Table(["method", *(f"{LABELS[m]} vs {b} [95% CI]" for b in BASELINES
                               for m in ("ramdocs_strict", "misinfo_leak"))])
    for method in per_q:
        table.add(method, *(versus(per_q, method, b, m) for b in BASELINES for m in ("ramdocs_strict", "misinfo_leak")))
    return table.lines()


def goal_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    table = Table(["method", "strict >= 38", "leak <= 33%", "calls <= 6", "conflict recall >= 80%",
                   "false conflict rate <= 20%", "goal"])
    for method, rows in per_q.items():
        values = list(rows.values())
        strict, leak = mean_percent(values, "ramdocs_strict"), mean_percent(values, "misinfo_leak")
        recall, false = mean_percent(values, "conflict_recall"), mean_percent(values, "false_conflict_rate")
        calls = usage_means(values)[0]
        checks = {"strict": strict is not None and strict >= GOAL["strict"],
                  "leak": leak is not None and leak <= GOAL["leak"], "calls": calls <= GOAL["calls"],
                  "conflict recall": recall is not None and recall >= GOAL["conflict_recall"],
                  "false conflict rate": false is not None and false <= GOAL["false_conflict_rate"]}
        shown = [f"{v:.1f} {'yes' if ok else 'no'}" if v is not None else "- (no report)"
                 for v, ok in zip((strict, leak, calls, recall, false), checks.values(), strict=True)]
        missed = [k for k, ok in checks.items() if not ok]
        table.add(method, *shown, "reached" if not missed else "missed on " + ", ".join(missed))
    return table.lines()


def frontier(path: Path, per_q: dict[str, dict[str, dict]]) -> None:
    """Strict score against misinformation leak (the goal's corner: up and left), each point sized by its
    method's LLM calls per question and labelled with them; the goal's box drawn dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for method, rows in per_q.items():
        values = list(rows.values())
        strict, leak = mean_percent(values, "ramdocs_strict"), mean_percent(values, "misinfo_leak")
        calls = usage_means(values)[0]
        ax.scatter(leak, strict, s=40 * calls, alpha=0.6)
        ax.annotate(f"{method} ({calls:.1f} calls)", (leak, strict), textcoords="offset points", xytext=(6, 4),
                    fontsize=8)
    ax.axhline(GOAL["strict"], linestyle="--", color="grey", linewidth=0.8)
    ax.axvline(GOAL["leak"], linestyle="--", color="grey", linewidth=0.8)
    ax.set_xlabel("misinformation leak (%, lower is better)")
    ax.set_ylabel("RAMDocs strict score (%)")
    n = len(next(iter(per_q.values())))
    ax.set_title(f"RAMDocs dev, {n} questions, Qwen2.5-Coder-1.5B\npoint area ~ LLM calls/q; goal: upper left of "
                 "the dashed lines", fontsize=8)
    ax.margins(x=0.25, y=0.1)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


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


def ablation_lines(per_q: dict[str, dict[str, dict]]) -> list[str]:
    lines = []
    variants = [m for m in per_q if m.startswith("ledger")]
    scores = Table(["variant (replayed)", *(LABELS[m] for m in METRICS), "calls/q",
                    f"strict vs {DEFAULT} [95% CI]", f"leak vs {DEFAULT} [95% CI]"])
    for name in variants:
        values = list(per_q[name].values())
        scores.add(name, *(cell(mean_percent(values, m)) for m in METRICS), f"{usage_means(values)[0]:.2f}",
                   versus(per_q, name, DEFAULT, "ramdocs_strict"), versus(per_q, name, DEFAULT, "misinfo_leak"))
    lines += [("Each variant changes one thing of today's default (`ledger.policies=[newest, witnesses, authority, "
               "show-all]`, `show_disputed=independent`, `same_thing=about`, `about_similarity=0.9`, "
               "`duplicate_similarity=0.8`), replayed by `benchmarks/ledger_replay.py` on the claims the stored "
               "`ledger` run read (every call answered from its trace: no model involved, the same claims for every "
               "variant; costs are the stored calls'). The two runs marked *as run* were answered under the rules "
               "before this change (ungrounded claims still made sides, witnesses counted only the passages a claim "
               "was read from). The `prior` policy cannot be replayed under today's rules (they reach it in "
               "questions the stored prior run never asked it); its row is the earlier run's."), "",
              *scores.lines(), ""]
    table = Table(["run", "disputes", "settled by (policy: disputes)", "report kinds", "questions with copies"])
    for name in variants:
        if name in per_q:
            decided, kinds, copies = deciders(list(per_q[name].values()))
            table.add(name, sum(decided.values()), ", ".join(f"{p}: {c}" for p, c in decided.most_common()),
                      ", ".join(f"{k}: {c}" for k, c in kinds.most_common()), copies)
    if table.rows:
        lines += [("Which policy settled each dispute, from the ledger's trace (a dispute is a set of differing answers "
                  "about one thing; the first policy in `ledger.policies` that decides it settles it):"), "",
                  *table.lines(), ""]
    earlier, prior = LEDGER_RUNS["ledger"], LEDGER_RUNS["ledger-prior"]
    if earlier in per_q and prior in per_q:
        lines += [("The `prior` policy (one closed-book call) added before show-all, under the earlier rules "
                  "(ledger-prior against ledger as run, paired): strict "
                  f"{diff_text(paired_diff(per_q, prior, earlier, 'ramdocs_strict'))}, leak "
                  f"{versus(per_q, prior, earlier, 'misinfo_leak')}.")]
    return lines


def other_section(runs: Path, title: str) -> list[str]:
    folder, metrics, what = OTHER_RUNS[title]
    head = [f"## {title}", "", f"{what}.", ""]
    if not (runs / folder / "results.json").exists():
        return [*head, f"Not yet run: `benchmarks/run_conflicts.sh` with `RUNS={folder}` (the `{folder}` section).", ""]
    per_q = on_common_questions(load(runs / folder)[1])
    table = Table(["method", *(LABELS.get(m, m) for m in metrics), "calls/q", "prompt tok/q", "model s/q"])
    for method, rows in per_q.items():
        values = list(rows.values())
        calls, prompt, seconds = usage_means(values)
        table.add(method, *(cell(mean_percent(values, m)) for m in metrics), f"{calls:.2f}", f"{prompt:,.0f}",
                  f"{seconds:.1f}")
    first = metrics[0]
    paired = (f"ledger against concat, paired, on {LABELS.get(first, first)}: "
              f"{diff_text(paired_diff(having(per_q, 'ledger', 'concat', first), 'ledger', 'concat', first))} "
              "(95% bootstrap CI)." if {"ledger", "concat"} <= set(per_q) else "")
    extra = [conflictqa_line(per_q), ""] if title == "conflictQA" else []
    paired = "" if extra else paired
    return [*head, f"{len(next(iter(per_q.values())))} questions.", "", *table.lines(), "", paired, "", *extra]


YES_NO = ({"yes", "true"}, {"no", "false"})


def decided(row: dict) -> float:
    """conflictQA's StrategyQA half: the reply says the gold yes/no word (or its alias) and not the other one. The
    gold lists the two aliases as two answers, which answer recall reads as two answers to find (at most 50%) and
    the strict score as never complete, so the report scores the decision itself."""
    words = set(row["answer"].lower().replace(",", " ").replace(".", " ").split())
    gold = {g.lower() for g in row["gold"]}
    other = next(o for g, o in (YES_NO, YES_NO[::-1]) if gold <= g)
    return float(bool(words & gold) and not words & other)


def conflictqa_line(per_q: dict[str, dict[str, dict]]) -> str:
    rows = {m: [r for r in per_q[m].values() if {g.lower() for g in r["gold"]} in YES_NO] for m in per_q}
    told = ", ".join(f"{m} {100 * sum(map(decided, rs)) / len(rs):.1f}%" for m, rs in rows.items() if rs)
    return (f"Decided right (the gold yes/no and not the other; the table's strict and recall read the two aliases "
            f"yes/true as two answers and are not meaningful here): {told}.")


def report_section(runs: Path) -> list[str]:
    head = ["## Conflict reports for another method (concat with `conflicts.report=true`)", "",
            ("Concat's stored answers on the same 100 questions (docs/results/peers/main) with the conflict report "
             "post-step on the passages each answer used, replayed by `benchmarks/ledger_replay.py concat-report` "
             "(concat's call and the report's claim calls answered from the stored traces). The report does not "
             "change the answer: its strict score and leak are concat's; it adds the conflict flags, for one call "
             "per passage."), ""]
    if not (runs / "replay/concat-report/results.json").exists():
        return [*head, "Not yet replayed: `benchmarks/ledger_replay.py concat-report`.", ""]
    per_q = on_common_questions(load(runs / "replay/concat-report")[1])
    table = Table(["method", *(LABELS[m] for m in METRICS), "calls/q"])
    for method, rows in per_q.items():
        values = list(rows.values())
        table.add(method, *(cell(mean_percent(values, m)) for m in METRICS), f"{usage_means(values)[0]:.2f}")
    return [*head, *table.lines(), ""]


DISCUSSION = [
    "## Reading", "",
    ("- **The RAMDocs goal is missed.** No method reaches strict >= 38 with leak <= 33% at <= 6 calls. Today's "
     "ledger meets the leak (27.9%) and call (4.49) parts and conflict recall (84.4%), with strict 26.0: 12 points "
     "under COrg answer-each (whose leak is 63.9%) and 6 above MADAM-RAG (within the CI) at under a third of its "
     "calls. `same_thing=versions` moves along the same trade: strict 32.0, leak 54.1%."),
    ("- **What changed since the first run, and what it bought** (replayed on the same claims): ungrounded claims no "
     "longer make sides, and a side's witnesses count every passage that states its answer, not only the passages "
     "it was read from: leak 36.1% -> 27.9% (paired -8.2 points, 95% CI [-18.0, +1.6]: likely, not certain), false "
     "conflict rate 85.5% -> 80.0%, strict 25.0 -> 26.0. A planted answer is mostly found in its one edited passage, "
     "while a true one is repeated."),
    ("- **Why strict stays low, from the traces.** Of the 39 valid answers the witness rule rejects, 32 lose to the "
     "other valid answer of a two-answer question: the 1.5B model writes the same `about` for two entities of one "
     "name, so the two answers look like one disputed fact. Nothing the rules can see separates them from planted "
     "answers: half of the misinformation documents are versions of a correct one (rapidfuzz ratio >= 0.7), the "
     "other half are as unlike every correct document (ratio 0.3-0.5, named-entity overlap near 0) as documents about "
     "another entity are, and at every pair of witness counts (2 vs 1, 3 vs 1, 3 vs 2) the rejected side is more "
     "often valid than planted. Without the witness rule (show-all only) strict rises to 28.0 and the leak to 50.8%."),
    ("- **Conflict detection**: false conflicts come mostly from correct documents, not noise: in the 55 questions "
     "without misinformation, 40 flagged sides are valid answers (mostly the other entity's) and 29 are answers the "
     "model misread from correct documents, against 16 from noise documents. The second goal (false conflict rate <= 20% "
     "with recall >= 80%) is missed for the same reason as strict; `same_thing=versions` has 7.3% false conflicts "
     "but finds 42.2% of the conflicts."),
    ("- **Policies one at a time**: `newest` and `authority` decide nothing on RAMDocs (its documents carry no date "
     "or source) and are measured on the freshness set; `witnesses` is what lowers the leak (-23 points) at no "
     "significant strict cost; `show_disputed=never` halves the leak again (13.1%) at 6 strict points; the "
     "similarity thresholds move nothing beyond a question. The `prior` policy (one closed-book call) lowers the "
     "leak a little and costs strict score and half a call under the earlier rules; it stays out of the default."),
    ("- **Mixed suite** (all 60): the ledger's tangle score is 47.6 against concat's 38.2 on the same questions "
     "(+9.4 points, CI [-1.0, +20.0]: likely above, not certain), so the goal (above 38.2) holds as a point estimate. "
     "It finds more (recall 61.8 against 39.0) and leaks about as much (39.4% against 36.4%); its conflict report "
     "flags 90% of the questions with a planted answer and 60% of those without one. On the seeded 30 measured "
     "first the gap was +10.0 [-1.7, +23.3]: the other 30 did not change the picture."),
    ("- **conflictQA** (60 questions, a memory passage against a counter-memory one, both plausible, no dates or "
     "sources): the ledger decides 28.3% right against concat's 36.7%. With two independent passages and one "
     "witness each, no policy can choose, so it reports both answers as disputed more often than concat, which "
     "picks one: the ledger's report is right that the sources disagree, but its answer then decides nothing. "
     "The table's strict and recall read the gold's two aliases (yes, true) as two answers and are not meaningful "
     "there; the loader keeps them as the dataset gives them, so the stored runs stay comparable."),
    ("- **Freshness** (templated passages, one per dated answer, plus a distractor answering another question; all "
     "100): the ledger answers 94.0% of the as-of questions with the answer valid then (47 of 50; concat 56.0%, "
     "+38.0 [+24.0, +52.0]), one question short of 95%. The run before a627952 gave 88.0%: each document was asked "
     "the question with its as-of clause, and the 1.5B model read a document dated before the moment as not "
     "answering (\"as of 2004\" against a 2003 record: \"unknown\"), so the answer valid then never became a "
     "claim; asked without the clause (the dates apply the moment), four of those six misses are answered right, "
     "and the calls are the plain questions' (the same documents), so the rerun cost no model time. The three misses "
     "left: a 1902 record the model reads as unknown even asked plainly (only the 1906 answer was left, so nothing "
     "competed with it), a valid passage of the painting question read as unknown, and a wording the metric refuses "
     "(\"January 7, 2021\", the side's most specific wording, came from the outdated passage; the valid one says "
     "\"2021\"). Under the first run's rules (witnesses before dates, the as-of year only, dated answers not made to "
     "compete) the asked-as-of calls gave 66.7% on the first 60. The plain questions lose mostly to distractors: a "
     "claim read from a passage that answers another question is grounded and, when it is the newest, wins."),
    ("- **A relevance floor, not taken**: on the freshness set a passage sharing no content word with the question "
     "is always a distractor (92 of 100 noise passages, 0 of 204 others), but that is its templates (every passage "
     "repeats its question). On RAMDocs dev the same floor would drop 70 of 718 correct documents (10%) with 115 of "
     "248 noise and 15 of 155 misinformation ones: it would cost the strict score it is short of, so no such rule "
     "was added."),
    "",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/conflicts")
    parser.add_argument("--peers", type=Path, default=ROOT / "docs/results/peers")
    args = parser.parse_args()
    per_q, missing = predictions(args.runs, args.peers)
    frontier(ROOT / "docs/results/conflicts_frontier.png", main_rows(per_q))
    intro = ("Generated by `benchmarks/conflicts_report.py` from `benchmarks/run_conflicts.sh` (data in "
             "`docs/results/conflicts/`) and the stored peers runs of `benchmarks/run_peers.sh` on the same question "
             "ids (`docs/results/peers/`). RAMDocs dev, the peers sample; embedded Qwen2.5-Coder-1.5B (Q4_K_M), "
             "greedy, each question's own documents (at most 10). Scores in %. **strict**: every gold answer and no "
             "wrong one; **recall**: share of gold answers present; **leak**: a misinformation answer present, over "
             "the questions that list one; **conflict recall** / **false conflict rate**: the conflict report "
             "flags a conflict where the documents hold a wrong answer / where they hold none (only methods that "
             "write reports have them). Calls include cached ones (what the method costs).")
    if missing:
        intro += " Not found: " + "; ".join(missing) + "."
    lines = ["# Conflicts: the ledger beside the peers (issue 50)", "", intro, "", counts_line(per_q), "",
             *main_table(main_rows(per_q)), "",
             "## Paired differences (95% bootstrap CI, in points; leak over the questions both have it)", "",
             *paired_table(main_rows(per_q)), "",
             "![strict score against misinformation leak, sized by calls](conflicts_frontier.png)", "",
             ("## The goal (strict >= 38 and leak <= 33% at <= 6 calls; conflict recall >= 80% with false conflict "
             "rate <= 20%)"), "", *goal_table(main_rows(per_q)), "",
             "## Policy ablations", "", *ablation_lines(per_q), "",
             *report_section(args.runs),
             *(line for title in OTHER_RUNS for line in other_section(args.runs, title)),
             *DISCUSSION]
    write_report("conflicts", lines)


if __name__ == "__main__":
    main()
