"""Write docs/results/corg.md from the runs of benchmarks/run_corg.sh.

Main table (paper Tables 5/6/12 layout: metrics and cost per method), paired bootstrap CIs for
the paper's directions, the graph constructor's two modes side by side (cost, agreement with each
other and with relations implied by RAMDocs' document labels), and rule vs LLM plural questions.
The hand-written discussion comes from benchmarks/corg_discussion.md.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from run_io import load, paired_diff, paired_text, step

from tanglerag.datasets.registry import load_dataset
from tanglerag.metrics.ambig import described_readings, readings
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["base", "retrieve", "summarize", "random", "kmeans", "corg", "separate"]
KIND = {"base": "single", "retrieve": "single", "summarize": "single", "random": "grouping", "kmeans": "grouping",
        "corg": "grouping", "separate": "individual"}
METRICS = ["ans", "ent", "ear", "d_f1"]
# Paper Table 6 (AmbigDocs+, Llama2-7B): Ans, Ent, EAR, D-F1; Table 12: input / output tokens.
PAPER = {"base": (51.4, 39.5, 25.7, 17.0, "773.9", 87.9), "retrieve": (44.1, 16.3, 7.9, 4.2, "354.6", 23.0),
         "summarize": (60.0, 42.1, 24.8, 18.8, "all", 28.2), "random": (56.7, 35.8, 27.4, 19.4, "all", 121.8),
         "kmeans": (42.6, 14.2, 6.3, 3.6, "all", 66.3), "corg": (61.4, 41.2, 34.0, 22.0, "752.2", 35.0),
         "separate": (66.9, 41.6, 37.3, 13.5, "all", 210.8)}


def stage_sum(row: dict, key: str, stages: set[str] | None = None) -> float:
    by_stage = row["usage_by_stage"]
    return sum(v[key] for name, v in by_stage.items() if stages is None or name in stages)


def calls(stage: dict) -> int:
    return stage["llm_calls"] + stage["cached_calls"]


def mean(values) -> float:
    """Mean over defined values: Ent and EAR are None on a question none of whose readings has a descriptor."""
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else float("nan")


def runs_and_calls(rows) -> tuple[float, float]:
    """Per question: answer runs (generate-stage calls) and all calls, cached ones included."""
    rows = list(rows)
    runs = mean(calls(row["usage_by_stage"].get("generate", {"llm_calls": 0, "cached_calls": 0})) for row in rows)
    return runs, mean(stage_sum(row, "llm_calls") + stage_sum(row, "cached_calls") for row in rows)


def main_table(results: dict, per_q: dict) -> str:
    by_name = {r["method"]: r for r in results["results"]}
    table = Table(["method", "kind", "Ans", "Ent", "EAR", "D-F1 [95% CI]", "answer runs/q", "all calls/q", "in tok/q",
                   "out tok/q", "model s/q", "paper D-F1 / out tok"])
    for name in METHODS:
        if name not in by_name:
            continue
        r, rows = by_name[name], per_q[name].values()
        m, ci = r["metrics"], r["ci"]
        runs, all_calls = runs_and_calls(rows)
        table.add(name, KIND[name], *(f"{100 * m[k]:.1f}" for k in METRICS[:3]),
                  f"{100 * m['d_f1']:.1f} [{100 * ci['d_f1'][0]:.1f}, {100 * ci['d_f1'][1]:.1f}]",
                  f"{runs:.2f}", f"{all_calls:.2f}", f"{r['usage']['prompt_tokens']:.0f}",
                  f"{r['usage']['completion_tokens']:.1f}", f"{r['usage']['model_seconds']:.1f}",
                  f"{PAPER[name][3]} / {PAPER[name][5]}")
    return table.markdown()


def directions(per_q: dict) -> str:
    table = Table(["comparison", "D-F1 difference, points [95% CI]", "paper (Llama2-7B, AmbigDocs+)"])
    for other in ["base", "random", "kmeans", "summarize", "retrieve", "separate"]:
        if other in per_q and "corg" in per_q:
            paper = PAPER["corg"][3] - PAPER[other][3]
            table.add(f"COrg - {other}", paired_text(per_q, "corg", other, "d_f1", unit=""), f"{paper:+.1f}")
    return table.markdown()


def by_answer_count(rows: dict, examples: dict) -> dict[int, list[dict]]:
    """Prediction rows of one-answer (1) and two-answer (2) questions."""
    groups: dict[int, list[dict]] = {1: [], 2: []}
    for qid, row in rows.items():
        groups[min(len(examples[qid].answers), 2)].append(row)
    return groups


def strata_table(per_q: dict, examples: dict) -> str:
    """Per method, the metrics on one-answer and on two-answer (same-name entity) questions."""
    table = Table(["method", "1-answer Ans", "1-answer D-F1", "2-answer Ans", "2-answer Ent", "2-answer D-F1"])
    for name in METHODS:
        if name not in per_q:
            continue
        by_size = by_answer_count(per_q[name], examples)
        table.add(name, *(f"{100 * mean(r['metrics'][k] for r in by_size[size]):.1f}" for size, k in
                          ((1, "ans"), (1, "d_f1"), (2, "ans"), (2, "ent"), (2, "d_f1"))))
    return table.markdown()


def unknown_of(row: dict) -> float:
    """1.0 when the response abstained; rows written before `unk` was a default metric have no parts then."""
    value = row["metrics"].get("unk")
    return float(not row["parts"]) if value is None else value


def unknown_table(per_q: dict, examples: dict, before: dict | None) -> str:
    """Per method, the share of "unknown" responses on one- and two-answer questions, before/after the prompt fix."""
    def rates(rows: dict | None) -> list[str]:
        if rows is None:
            return ["-"] * 3
        by_size = {size: [unknown_of(r) for r in group] for size, group in by_answer_count(rows, examples).items()}
        return [f"{100 * mean(by_size[1]):.0f}%", f"{100 * mean(by_size[2]):.0f}%",
                f"{100 * mean(by_size[1] + by_size[2]):.0f}%"]
    columns = ["1-answer q", "2-answer q", "all"]
    if before:
        columns = [f"{when}: {column}" for when in ("before", "after") for column in columns]
    table = Table(["method", *columns])
    for name in [m for m in METHODS if m in per_q]:
        table.add(name, *(rates(before.get(name)) if before else []), *rates(per_q[name]))
    return table.markdown()


def before_after_table(before: dict, per_q: dict) -> str:
    """Ans and D-F1 of each method on the same questions with the earlier and the current multi-answer prompt.
    Ent/EAR are left out: the earlier rows were scored before descriptor-less readings stopped earning credit."""
    table = Table(["method", "Ans before", "Ans now", "D-F1 before", "D-F1 now", "D-F1 now - before, points [95% CI]"])
    for name in [m for m in METHODS if m in per_q and m in before]:
        shared = per_q[name].keys() & before[name].keys()
        pair = {"now": {q: per_q[name][q] for q in shared}, "before": {q: before[name][q] for q in shared}}
        table.add(name, *(f"{100 * mean(pair[when][q]['metrics'][k] for q in shared):.1f}"
                          for k in ("ans", "d_f1") for when in ("before", "now")),
                  paired_text(pair, "now", "before", "d_f1", unit=""))
    return table.markdown()


def goal_line(per_q: dict) -> str:
    """Issue 14's goal: COrg's D-F1 at least Separate's with at most 0.6x Separate's answer calls."""
    if "corg" not in per_q or "separate" not in per_q:
        return ""
    corg_runs, _ = runs_and_calls(per_q["corg"].values())
    sep_runs, _ = runs_and_calls(per_q["separate"].values())
    met = paired_diff(per_q, "corg", "separate", "d_f1")[0] >= 0 and corg_runs <= 0.6 * sep_runs
    return (f"COrg minus Separate on D-F1: {paired_text(per_q, 'corg', 'separate', 'd_f1')}, with {corg_runs:.2f} answer runs per "
            f"question against Separate's {sep_runs:.2f} ({corg_runs / sep_runs:.2f}x). Goal (D-F1 at least "
            f"Separate's with at most 0.6x its answer runs): {'met' if met else 'not met'}.")


def silver_relation(a: dict, b: dict, n_answers: int) -> str | None:
    """Relation implied by RAMDocs labels, where the labels settle it."""
    if "noise" in (a["type"], b["type"]):
        return "none"
    same = a["answer"].strip().lower() == b["answer"].strip().lower()
    if a["type"] == b["type"] == "correct":
        return "duplicated" if same else "distracting"
    if n_answers == 1 and {a["type"], b["type"]} == {"correct", "misinfo"}:
        return "counterfactual"
    return "duplicated" if same else None


def graph_edges(row: dict) -> dict[tuple[int, int], str]:
    """Relations by the pair's positions in the question's passage list."""
    position = {pid: i for i, pid in enumerate(row["passage_ids"])}
    return {(position[e["source"]], position[e["target"]]): e["relation"] for e in step(row, "corg_graph")["edges"]}


def graph_section(runs: dict[str, dict], examples: dict) -> str:
    modes = {mode: runs[mode][1]["corg"] for mode in ("pairwise", "extract") if mode in runs}
    table = Table(["graph mode", "graph calls/q", "graph in tok/q", "graph out tok/q", "graph model s/q",
                   "pairs judged / all", "unparsed labels/q", "label accuracy vs RAMDocs labels (pairs)", "COrg D-F1",
                   "COrg groups/q"])
    for mode, rows in modes.items():
        org = [row["usage_by_stage"].get("organize") for row in rows.values()]
        graphs = [step(row, "corg_graph") for row in rows.values()]
        hit = total = 0
        for qid, row in rows.items():
            ex = examples[qid]
            meta = [p.metadata for p in ex.passages]
            position = {p.id: i for i, p in enumerate(ex.passages)}
            ids = row["passage_ids"]
            for (i, j), rel in graph_edges(row).items():
                silver = silver_relation(meta[position[ids[i]]], meta[position[ids[j]]], len(ex.answers))
                if silver is not None:
                    total += 1
                    hit += rel == silver
        d_f1 = mean(row["metrics"]["d_f1"] for row in rows.values())
        groups = mean(len(step(row, "groups")["groups"]) for row in rows.values())
        judged = sum(g["pairs_judged"] for g in graphs)
        table.add(mode, f"{mean(calls(o) for o in org):.2f}", f"{mean(o['prompt_tokens'] for o in org):.0f}",
                  f"{mean(o['completion_tokens'] for o in org):.1f}", f"{mean(o['model_seconds'] for o in org):.1f}",
                  f"{judged} / {sum(g['pairs_total'] for g in graphs)}", f"{mean(g['unparsed'] for g in graphs):.2f}",
                  f"{100 * hit / max(total, 1):.1f}% ({total})", f"{100 * d_f1:.1f}", f"{groups:.2f}")
    out = [table.markdown()]
    if len(modes) == 2:
        agree = Counter()
        pairs = 0
        for qid, row in modes["pairwise"].items():
            if qid not in modes["extract"]:
                continue
            a, b = graph_edges(row), graph_edges(modes["extract"][qid])
            for key in a.keys() & b.keys():
                pairs += 1
                agree[(a[key], b[key])] += 1
        same = sum(v for (x, y), v in agree.items() if x == y)
        out.append(f"\nPairwise and extract give the same label on {same} of {pairs} pairs "
                   f"({100 * same / max(pairs, 1):.1f}%). Most frequent label pairs (pairwise, extract): " +
                   ", ".join(f"{x}/{y} {v}" for (x, y), v in agree.most_common(8)) + ".")
        saved = [(step(row, "corg_graph"), len(row["passage_ids"])) for row in modes["pairwise"].values()]
        naive_calls = sum(max(n - 1, 0) for _, n in saved)
        used = sum(int(calls(row["usage_by_stage"]["organize"])) for row in modes["pairwise"].values()
                   if "organize" in row["usage_by_stage"])
        all_pairs = sum(g["pairs_total"] for g, _ in saved)
        out.append(f"\nAlgorithm 1 (pairwise): {used} calls where one call per focal context without mirroring "
                   f"needs {naive_calls} ({100 * (1 - used / max(naive_calls, 1)):.1f}% saved) and one call per "
                   f"pair {all_pairs} ({100 * (1 - used / max(all_pairs, 1)):.1f}% saved); "
                   f"{sum(g['pairs_judged'] for g, _ in saved)} of {all_pairs} pairs "
                   "labelled by the LLM, the rest mirrored.")
    return "\n".join(out)


def plural_section(runs: dict[str, dict]) -> str:
    if "plural-llm" not in runs:
        return "(not run)"
    rule = runs["pairwise"][1]["corg"]
    llm = runs["plural-llm"][1]["corg"]
    table = Table(["plural form", "Ans", "Ent", "EAR", "D-F1", "rerank calls/q", "examples"])
    for label, rows in (("rule", rule), ("llm", llm)):
        sample = next((g["question"] for row in rows.values() for g in step(row, "groups")["groups"]
                       if len(g["passage_ids"]) > 1), "")
        rerank = mean(calls(row["usage_by_stage"].get("rerank", {"llm_calls": 0, "cached_calls": 0}))
                      for row in rows.values())
        table.add(label, *(f"{100 * mean(r['metrics'][k] for r in rows.values()):.1f}" for k in METRICS),
                  f"{rerank:.2f}", sample.replace("|", "/"))
    return table.markdown() + f"\n\nLLM minus rule on D-F1: {paired_text({'a': llm, 'b': rule}, 'a', 'b', 'd_f1')}."


def answer_each_section(runs: dict[str, dict]) -> str:
    """COrg, COrg answering each kept context, and Separate on the same questions (runs named by folder)."""
    if "answer-each" not in runs:
        return "(not run)"
    _, per_q = runs["pairwise"]
    per_q = {**per_q, "corg + answer each": runs["answer-each"][1]["corg"]}
    table = Table(["method", "Ans", "Ent", "EAR", "D-F1", "answer runs/q", "all calls/q", "in tok/q"])
    for name in ("corg", "corg + answer each", "separate"):
        rows = per_q[name].values()
        runs_q, all_q = runs_and_calls(rows)
        table.add(name, *(f"{100 * mean(r['metrics'][k] for r in rows):.1f}" for k in METRICS), f"{runs_q:.2f}",
                  f"{all_q:.2f}", f"{mean(stage_sum(r, 'prompt_tokens') for r in rows):.0f}")
    lines = [*table.lines(), ""]
    for other in ("corg", "separate"):
        for metric in ("ans", "d_f1"):
            lines.append(f"- answer-each minus {other}, {metric}: "
                         f"{paired_text(per_q, 'corg + answer each', other, metric)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results/corg")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/corg.md")
    parser.add_argument("--before", type=Path, default=ROOT / "docs/results/corg_v1",
                        help="the runs made with the earlier multi-answer prompt: before/after tables, and the graph "
                             "and plural ablations, which were not re-run")
    parser.add_argument("--fresh", type=Path, default=ROOT / "docs/results/corg_fresh/pairwise",
                        help="the pairwise run on a second seeded sample, not used for tuning")
    args = parser.parse_args()
    runs = {p.name: load(p) for p in sorted(args.runs.iterdir()) if (p / "results.json").exists()}
    results, per_q = runs["pairwise"]
    _, examples = load_dataset("ramdocs")
    by_id = {ex.id: ex for ex in examples}
    n_docs = [len(by_id[q].passages) for q in per_q["corg"]]
    two = sum(len(by_id[q].answers) > 1 for q in per_q["corg"])
    setting = results["setting"]
    gold = [(len(readings(by_id[q])), len(described_readings(by_id[q]))) for q in per_q["corg"]]
    descriptors = (f"Ent and EAR score only the {sum(d for _, d in gold)} of {sum(r for r, _ in gold)} gold readings "
                   f"that have a descriptor; on {sum(d == 0 for _, d in gold)} questions none has one, and those "
                   "questions are left out of the Ent and EAR means.")
    discussion = (ROOT / "benchmarks/corg_discussion.md").read_text()
    earlier = {p.name: load(p) for p in sorted(args.before.iterdir()) if (p / "results.json").exists()}
    before = earlier["pairwise"][1] if "pairwise" in earlier else None
    fresh_section = "(not run)"
    if (args.fresh / "results.json").exists():
        fresh_results, fresh_q = load(args.fresh)
        fresh_two = sum(len(by_id[q].answers) > 1 for q in fresh_q["corg"])
        fresh_section = (f"A second seeded sample (eval.seed={fresh_results['settings']['eval']['seed']}, "
                         f"{fresh_results['n']} questions, {fresh_two} with two answers; "
                         f"{len(set(fresh_q['corg']) & set(per_q['corg']))} shared with the first), run after every "
                         f"prompt choice was made on other questions.\n\n{main_table(fresh_results, fresh_q)}\n\n"
                         f"{unknown_table(fresh_q, by_id, None)}\n\n{directions(fresh_q)}\n\n{goal_line(fresh_q)}")
        fresh_each = args.fresh.parent / "answer-each"
        if (fresh_each / "results.json").exists():
            fresh_section += ("\n\nThe same sample with `corg.answer_each=true`:\n\n" +
                              answer_each_section({"pairwise": (fresh_results, fresh_q),
                                                   "answer-each": load(fresh_each)}))
    doc = f"""# COrg (paper 000) on RAMDocs dev

Generated by `benchmarks/corg_report.py` from `benchmarks/run_corg.sh {results['n']}` (data in `docs/results/corg/`).
Model `{setting['model']}` (greedy), a seeded random sample of {results['n']} RAMDocs dev questions ({two} with two
gold answers for two same-name entities, {results['n'] - two} with one), each with all of its own documents
(mean {mean(n_docs):.1f}, at most {max(n_docs)}; cut to {results['settings']['methods']['passage_words']} words in prompts).
Ans, Ent, EAR and D-F1 in % (D-F1 reader: {results['settings']['corg']['reader']}); 95% bootstrap CIs
({results['n']} questions). "answer runs" are the answer-generating calls the paper counts as inference runs;
"all calls" adds graph, ranking, summary and plural calls. Tokens, model seconds: per question, all calls.
{descriptors}

## Seven methods (paper Tables 5, 6, 12)

{main_table(results, per_q)}

{goal_line(per_q)}

## Before and after the multi-answer prompt change

"before" is the same sample answered with the earlier multi-answer prompt (one answer line per entity, "answer
(descriptor) [n]", ending with an explicit "if no context answers, write unknown"); "now" with the current one
(`answer | which one it is about | [n]`, and "unknown" only if no context is about what the question asks), chosen
with `benchmarks/multi_answer_probe.py` on other dev questions (docs/results/multi_answer_probe.md). Data of the
earlier runs: `docs/results/corg_v1/`.

{before_after_table(before, per_q) if before else "(no earlier run)"}

The share of responses with no answer ("unknown"):

{unknown_table(per_q, by_id, before)}

## A fresh sample

{fresh_section}

## One-answer vs two-answer questions

COrg is built for the second kind: two same-name entities, each with its own answer and descriptor.

{strata_table(per_q, by_id)}

## The paper's directions, paired per question

{directions(per_q)}

## Graph constructor: pairwise (paper) vs extract (ours)

Measured with the earlier answer prompt (runs in `docs/results/corg_v1/`, not re-run): the graph's labels and
calls do not depend on the answer prompt, only the COrg D-F1 column does.

{graph_section(earlier, by_id)}

Label accuracy compares each edge with the relation RAMDocs' document labels imply where they settle it:
noise vs anything -> none; two correct documents -> duplicated (same answer) or distracting (different
entities' answers); correct vs misinformation on a one-answer question -> counterfactual.

## Plural question: rules vs LLM

Measured with the earlier answer prompt (not re-run): rule-based plural questions against the LLM's rewrite.

{plural_section(earlier)}

## COrg answering each kept context (ours, `corg.answer_each=true`)

The reranker's groups and drops as in COrg, but one answer call per kept context with the question as
asked; the parts keep their COrg group number.

{answer_each_section(runs)}

{discussion}"""
    args.out.write_text(doc)
    print(doc)


if __name__ == "__main__":
    main()
