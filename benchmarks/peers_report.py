"""Issue 28's report: our methods beside MADAM-RAG and Astute RAG on RAMDocs dev, with the cost-quality frontier.

Reads `benchmarks/run_peers.sh` runs (docs/results/peers/{main,answer-each}) and writes docs/results/peers.md and
the frontier plot docs/results/peers_frontier.png (strict score with its 95% CI against LLM calls per question).
Usage: .venv/bin/python benchmarks/peers_report.py [--runs docs/results/peers]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from run_io import (
    diff_text,
    group_table,
    load,
    mean_percent,
    methods_frontier,
    on_common_questions,
    paired_diff,
    paired_text,
    table_head,
    usage_means,
    write_report,
)

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("concat", "separate", "corg", "corg-answer-each", "corg-support", "corg-answer-each-support", "madam-rag",
         "astute-rag", "astute-rag-repair")
VARIANTS = {"answer-each": ("corg", "corg-answer-each"), "support": ("corg", "corg-support"),
            "answer-each-support": ("corg", "corg-answer-each-support"),
            "astute-repair": ("astute-rag", "astute-rag-repair")}  # run folder: (method it ran, name in the report)
METRICS = ("ramdocs_strict", "answer_recall", "d_f1", "misinfo_leak", "noise_cited")
LABELS = {"ramdocs_strict": "strict", "answer_recall": "recall", "d_f1": "D-F1", "misinfo_leak": "misinfo leak",
          "noise_cited": "noise cited"}
KINDS = {"one answer": lambda t: "ambiguous" not in t, "several answers": lambda t: "ambiguous" in t,
         "with misinformation": lambda t: "misinformation" in t, "with noise": lambda t: "noise" in t}
PUBLISHED = [  # RAMDocs test, 500 questions, the MADAM-RAG paper's strict exact match
    ("Llama-3.3-70B-Instruct", 34.4, 32.6, 31.8), ("Qwen2.5-72B-Instruct", 26.4, 20.6, 20.8),
    ("GPT-4o-mini", 28.0, 25.0, 13.0)]


def predictions(runs: Path) -> dict[str, dict[str, dict]]:
    """Per method, per question id, on the questions every method answered."""
    _, per_q = load(runs / "main")
    for folder, (method, variant) in VARIANTS.items():
        if (runs / folder / "results.json").exists():
            per_q[variant] = load(runs / folder)[1][method]
    return on_common_questions({m: per_q[m] for m in ORDER if m in per_q})


def main_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    head = ("| method | " + " | ".join(LABELS[m] for m in METRICS) + " | strict vs madam-rag [95% CI] "
            "| LLM calls/q | prompt tok/q | model s/q |")
    out = table_head(head)
    for method, rows in per_q.items():
        values = list(rows.values())
        cells = [f"{v:.1f}" if (v := mean_percent(values, m)) is not None else "-" for m in METRICS]
        versus = ("-" if method == "madam-rag" or "madam-rag" not in per_q
                  else paired_text({method: rows, "madam-rag": per_q["madam-rag"]}, method, "madam-rag",
                                   "ramdocs_strict"))
        calls, prompt, seconds = usage_means(values)
        out.append(f"| {method} | " + " | ".join(cells) + f" | {versus} | {calls:.2f} | {prompt:,.0f} | {seconds:.1f} |")
    return out


def kind_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    kinds = {kind: (lambda row, test=test: test(row.get("tangles", []))) for kind, test in KINDS.items()}
    return group_table(per_q, kinds, "ramdocs_strict", "questions")


def goal_lines(per_q: dict[str, dict[str, dict]]) -> list[str]:
    """The issue's goal, checked for each COrg variant: at least MADAM-RAG's strict score at no more than half its
    LLM calls, with a lower misinformation leak (on the questions that have a known wrong answer)."""
    madam = per_q.get("madam-rag")
    if madam is None:
        return []
    out = table_head("| variant | strict vs madam-rag [95% CI] | calls / madam-rag's | misinfo leak vs madam-rag "
                     "| goal |")
    madam_calls = usage_means(list(madam.values()))[0]
    for variant in (m for m in per_q if m.startswith("corg")):
        rows = per_q[variant]
        strict = paired_diff({variant: rows, "madam-rag": madam}, variant, "madam-rag", "ramdocs_strict")
        ratio = usage_means(list(rows.values()))[0] / madam_calls
        leaked = [i for i in rows if rows[i]["metrics"].get("misinfo_leak") is not None]
        leak = (mean_percent([rows[i] for i in leaked], "misinfo_leak") or 0.0) - \
            (mean_percent([madam[i] for i in leaked], "misinfo_leak") or 0.0)
        missed = [what for what, ok in (("strict", strict[0] >= 0), ("calls", ratio <= 0.5), ("leak", leak < 0))
                  if not ok]
        out.append(f"| {variant} | {diff_text(strict)} | {ratio:.2f} | {leak:+.1f} points (n={len(leaked)}) "
                   f"| {'reached' if not missed else 'missed on ' + ', '.join(missed)} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/peers")
    args = parser.parse_args()
    per_q = predictions(args.runs)
    n = len(next(iter(per_q.values())))
    methods_frontier(ROOT / "docs/results/peers_frontier.png", per_q, "ramdocs_strict", "RAMDocs strict score (%)",
                     "RAMDocs dev")
    intro = (f"Generated by `benchmarks/peers_report.py` from `benchmarks/run_peers.sh` ({n} questions answered by "
             "every method; data in `docs/results/peers/`). Embedded Qwen2.5-Coder-1.5B (Q4_K_M), greedy, each "
             "question's own documents (at most 10). Scores in %. **strict** is the MADAM-RAG paper's score: right "
             "only when the response contains every gold answer and no wrong one (SQuAD-normalised, matched as whole "
             "words; `metrics/conflict.py`); **recall** the share of gold answers present; **misinfo leak** a wrong "
             "(misinformation) answer present; **noise cited** a noise document cited. Paired 95% bootstrap CIs "
             "against madam-rag; LLM calls include cached ones (what the method costs).")
    lines = ["# Peers on RAMDocs dev: COrg beside MADAM-RAG and Astute RAG", "", intro, "",
             *main_table(per_q), "", "## Strict score by kind of question", "", *kind_table(per_q), "",
             "![strict score against LLM calls per question](peers_frontier.png)", "",
             "## The goal: COrg at least MADAM-RAG's strict score, at most half its calls, a lower misinformation leak",
             "", *goal_lines(per_q), "",
             "## Published (RAMDocs test, 500 questions, strict exact match, the MADAM-RAG paper)", "",
             *table_head("| model | MADAM-RAG | prompt-based | Astute RAG |"),
             *[f"| {model} | {a} | {b} | {c} |" for model, a, b, c in PUBLISHED], ""]
    write_report("peers", lines)


if __name__ == "__main__":
    main()
