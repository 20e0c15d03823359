"""Issue 28's report: our methods beside MADAM-RAG and Astute RAG on RAMDocs dev, with the cost-quality frontier.

Reads `benchmarks/run_peers.sh` runs (docs/results/peers/main and the variants' folders, VARIANTS) and writes
docs/results/peers.md (tables, the goal, how the peers ran from their traces) and the frontier plot
docs/results/peers_frontier.png (strict score with its 95% CI against LLM calls per question).
Usage: .venv/bin/python benchmarks/peers_report.py [--runs docs/results/peers]
"""

from __future__ import annotations

import argparse
from collections import Counter
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
    step,
    usage_means,
    write_report,
)

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("concat", "separate", "corg", "corg-answer-each", "corg-support", "corg-answer-each-support",
         "madam-rag-1-round", "madam-rag", "astute-rag", "astute-rag-repair")
VARIANTS = {"answer-each": ("corg", "corg-answer-each"), "support": ("corg", "corg-support"),
            "answer-each-support": ("corg", "corg-answer-each-support"), "madam-1": ("madam-rag", "madam-rag-1-round"),
            "astute-repair": ("astute-rag", "astute-rag-repair")}  # run folder: (method it ran, name in the report)
METRICS = ("ramdocs_strict", "answer_recall", "d_f1", "misinfo_leak", "noise_cited")
LABELS = {"ramdocs_strict": "strict", "answer_recall": "recall", "d_f1": "D-F1", "misinfo_leak": "misinfo leak",
          "noise_cited": "noise cited"}
KINDS = {"one answer": lambda t: "ambiguous" not in t, "several answers": lambda t: "ambiguous" in t,
         "with misinformation": lambda t: "misinformation" in t, "with noise": lambda t: "noise" in t}
EXAMPLE_DESCRIPTORS = ("the basketball player", "the scientist")  # madam/prompts.py's worked example
PUBLISHED = [  # RAMDocs test, 500 questions, the MADAM-RAG paper's strict exact match
    ("Llama-3.3-70B-Instruct", 34.4, 32.6, 31.8), ("Qwen2.5-72B-Instruct", 26.4, 20.6, 20.8),
    ("GPT-4o-mini", 28.0, 25.0, 13.0)]


def predictions(runs: Path) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """Per method, per question id, on the questions every method answered; and the variants left out because
    they have not yet answered every question of the main run (a variant still running would shrink the tables)."""
    _, per_q = load(runs / "main")
    partial = []
    for folder, (method, variant) in VARIANTS.items():
        if (runs / folder / "results.json").exists():
            rows = load(runs / folder)[1][method]
            if set(per_q[method]) <= set(rows):
                per_q[variant] = rows
            else:
                partial.append(f"{variant} ({len(rows)} of {len(per_q[method])} questions so far)")
    return on_common_questions({m: per_q[m] for m in ORDER if m in per_q}), partial


def main_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    table = Table(["method", *(LABELS[m] for m in METRICS), "strict vs madam-rag [95% CI]", "LLM calls/q",
                   "prompt tok/q", "model s/q"])
    for method, rows in per_q.items():
        values = list(rows.values())
        cells = [f"{v:.1f}" if (v := mean_percent(values, m)) is not None else "-" for m in METRICS]
        versus = ("-" if method == "madam-rag" or "madam-rag" not in per_q
                  else paired_text({method: rows, "madam-rag": per_q["madam-rag"]}, method, "madam-rag",
                                   "ramdocs_strict"))
        calls, prompt, seconds = usage_means(values)
        table.add(method, *cells, versus, f"{calls:.2f}", f"{prompt:,.0f}", f"{seconds:.1f}")
    return table.lines()


def kind_table(per_q: dict[str, dict[str, dict]]) -> list[str]:
    kinds = {kind: (lambda row, test=test: test(row.get("tangles", []))) for kind, test in KINDS.items()}
    return group_table(per_q, kinds, "ramdocs_strict", "questions")


def goal_lines(per_q: dict[str, dict[str, dict]]) -> list[str]:
    """The issue's goal, checked for each COrg variant: at least MADAM-RAG's strict score at no more than half its
    LLM calls, with a lower misinformation leak (on the questions that have a known wrong answer)."""
    madam = per_q.get("madam-rag")
    if madam is None:
        return []
    table = Table(["variant", "strict vs madam-rag [95% CI]", "calls / madam-rag's", "misinfo leak vs madam-rag",
                   "goal"])
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
        table.add(variant, diff_text(strict), f"{ratio:.2f}", f"{leak:+.1f} points (n={len(leaked)})",
                  "reached" if not missed else "missed on " + ", ".join(missed))
    return table.lines()


def document_labels(row: dict) -> dict[str, dict]:
    """RAMDocs' label of each document a prediction was given (its type and answer), by passage id."""
    return {p["passage"]["id"]: p["passage"]["metadata"] for p in row.get("passages", [])}


def answering(rows: list[dict], debates: list[dict], kind: str) -> str:
    """How many agents holding a ``kind`` document (RAMDocs' label) gave an answer in the first and the last round."""
    first = last = total = 0
    for row, debate in zip(rows, debates, strict=True):
        labels = document_labels(row)
        for a, b in zip(debate["rounds"][0]["agents"], debate["rounds"][-1]["agents"], strict=True):
            if labels.get(a["passage_id"], {}).get("type") == kind:
                total, first, last = total + 1, first + (a["answer"] != "unknown"), last + (b["answer"] != "unknown")
    return f"{kind} {first} -> {last} of {total}"


def madam_line(rows: list[dict]) -> str:
    """How MADAM-RAG's debates went: rounds run, why they ended, who answered in the first and the last round,
    unreadable agents, unknown finals, and final answers that carry the aggregator's worked example (its
    descriptors "the basketball player" / "the scientist")."""
    pairs = [(r, d) for r in rows if (d := step(r, "debate"))]
    rows, debates = [r for r, _ in pairs], [d for _, d in pairs]
    rounds = Counter(len(d["rounds"]) for d in debates)
    settled = sum(d["stopped"].startswith("no agent") for d in debates)
    agents = [a for d in debates for rnd in d["rounds"] for a in rnd["agents"]]
    unreadable = sum(a["unreadable"] for a in agents)
    unknown = sum(r["answer"].strip() == "unknown" for r in rows)
    copied = sum(any(p.get("descriptor") in EXAMPLE_DESCRIPTORS for p in r.get("parts", [])) for r in rows)
    ran = ", ".join(f"{n} round{'s' * (n > 1)} in {rounds[n]}" for n in sorted(rounds))
    moved = "; ".join(answering(rows, debates, kind) for kind in ("correct", "misinfo", "noise"))
    return (f"- MADAM-RAG ({len(debates)} questions): agent rounds run: {ran} (a round whose agents all keep their "
            f"answers ends the debate without a new aggregation): {settled} ended that way, {len(debates) - settled} "
            f"at the round limit. Agents that gave an answer, first round -> last, by their document's label: "
            f"{moved}. {unreadable} of {len(agents)} agent replies unreadable; {unknown} final answers unknown; "
            f"{copied} final answers carry the worked example's descriptors.")


def astute_line(name: str, rows: list[dict]) -> str:
    """How Astute RAG went: did the model write a memory passage, did consolidation give groups answers (an
    unreadable or passage-copying reply leaves one answerless group per source), and did the choice take a group
    that memory backs."""
    steps = [s for r in rows if (s := step(r, "astute"))]
    memory = sum(bool(s["internal"]) for s in steps)
    last = [s["rounds"][-1] if s["rounds"] else [] for s in steps]
    grouped = sum(any(g["answer"] for g in groups) for groups in last)
    chose_memory = sum(any(n <= len(groups) and any(src.startswith("memory-") for src in groups[n - 1]["sources"])
                           for n in s["chosen_groups"]) for s, groups in zip(steps, last, strict=True))
    memory_only = sum(any(not p["citations"] for p in s["chosen"]) for s in steps)
    return (f"- {name} ({len(steps)} questions): a memory passage written in {memory}; consolidation gave its groups "
            f"answers in {grouped} (the rest fell back to one answerless group per source); the choice took a group "
            f"with the memory passage in {chose_memory}, an answer backed by memory alone in {memory_only}.")


RELATIONS = ("ambiguous", "counterfactual", "distracting", "duplicated", "none")


def pair_kind(a: dict, b: dict) -> str:
    """A document pair by RAMDocs' labels; two correct ones are about the same entity when they give one answer."""
    kind = " / ".join(sorted((a.get("type", "?"), b.get("type", "?"))))
    if a.get("type") == b.get("type") == "correct":
        kind += ", same answer" if a["answer"].lower() == b["answer"].lower() else ", different answers"
    return kind


def graph_table(rows: list[dict]) -> list[str]:
    """What COrg's graph called each kind of document pair. Two correct documents with different answers are
    different entities (ambiguous); a correct and a misinformation one conflict (counterfactual): the support rule
    (corg.conflicts=support) acts only on pairs the graph calls counterfactual."""
    labels: dict[str, Counter[str]] = {}
    for row in rows:
        meta = document_labels(row)
        for edge in (step(row, "corg_graph") or {"edges": []})["edges"]:
            if edge["source"] in meta and edge["target"] in meta:
                kind = pair_kind(meta[edge["source"]], meta[edge["target"]])
                labels.setdefault(kind, Counter())[edge["relation"]] += 1
    table = Table(["document pair (RAMDocs labels)", "pairs", *RELATIONS])
    for kind, counts in sorted(labels.items()):
        total = sum(counts.values())
        table.add(kind, total, *(f"{100 * counts[r] / total:.0f}%" for r in RELATIONS))
    return table.lines()


def diagnostics(per_q: dict[str, dict[str, dict]]) -> list[str]:
    out = [madam_line(list(per_q["madam-rag"].values()))] if "madam-rag" in per_q else []
    return out + [astute_line(name, list(per_q[name].values())) for name in ("astute-rag", "astute-rag-repair")
                  if name in per_q]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/peers")
    args = parser.parse_args()
    per_q, partial = predictions(args.runs)
    n = len(next(iter(per_q.values())))
    methods_frontier(ROOT / "docs/results/peers_frontier.png", per_q, "ramdocs_strict", "RAMDocs strict score (%)",
                     "RAMDocs dev")
    intro = (f"Generated by `benchmarks/peers_report.py` from `benchmarks/run_peers.sh` ({n} questions answered by "
             "every method; data in `docs/results/peers/`). Embedded Qwen2.5-Coder-1.5B (Q4_K_M), greedy, each "
             "question's own documents (at most 10). Scores in %. **strict** is the MADAM-RAG paper's score: right "
             "only when the response contains every gold answer and no wrong one (SQuAD-normalised, matched as whole "
             "words; `metrics/conflict.py`); **recall** the share of gold answers present; **misinfo leak** a wrong "
             "(misinformation) answer present, over the questions that list one; **noise cited** a noise document cited, "
             "over the questions that have one. Paired 95% bootstrap CIs "
             "against madam-rag; LLM calls include cached ones (what the method costs).")
    if partial:
        intro += " Left out until they have answered every question: " + "; ".join(partial) + "."
    lines = ["# Peers on RAMDocs dev: COrg beside MADAM-RAG and Astute RAG", "", intro, "",
             *main_table(per_q), "", "## Strict score by kind of question", "", *kind_table(per_q), "",
             "![strict score against LLM calls per question](peers_frontier.png)", "",
             "## The goal: COrg at least MADAM-RAG's strict score, at most half its calls, a lower misinformation leak",
             "", *goal_lines(per_q), "",
             "## How the peers ran (from their traces)", "", *diagnostics(per_q), "",
             "What COrg's relation graph called each kind of document pair (share of the pairs of that kind):", "",
             *graph_table(list(per_q["corg"].values())), "",
             "## Published (RAMDocs test, 500 questions, strict exact match, the MADAM-RAG paper)", "",
             *Table(["model", "MADAM-RAG", "prompt-based", "Astute RAG"], PUBLISHED).lines(), ""]
    write_report("peers", lines)


if __name__ == "__main__":
    main()
