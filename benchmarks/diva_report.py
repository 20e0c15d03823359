"""Diva (paper 001) report from one eval run: Table 1 / Table 2 layout, the verification grades, AG's choices.

Usage: python benchmarks/diva_report.py --run docs/results/diva/main --out docs/results/diva.md
       [--also runs/diva50-oracle ...] [--title "..."] [--discussion benchmarks/diva_discussion.md]
The run must hold closed-book, vanilla-rag, diva-rd and diva (query-refinement and toc are shown when present).
``--also`` adds methods from other runs on the same questions (e.g. diva-oracle for Table 3's oracle row).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from statistics import mean

from run_io import load, paired_diff, paired_text, step

from tanglerag.tables import Table

ORDER = ["closed-book", "query-refinement", "vanilla-rag", "toc", "diva-rd", "diva"]
ABLATION = [("closed-book", "Closed-book LLM"), ("vanilla-rag", "+ RAG (vanilla)"), ("diva-rd", "+ RD"),
            ("diva", "+ AG (Diva)")]


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def ci(result: dict, metric: str) -> str:
    low, high = result["ci"].get(metric, (None, None))
    return "" if low is None else f" [{100 * low:.1f}, {100 * high:.1f}]"


def table1(results: dict) -> str:
    rows = {r["method"]: r for r in results["results"]}
    table = Table(["method", "R-L", "D-F1", "DR", "MRecall@5", "calls/q", "prompt tok/q", "completion tok/q",
                   "model s/q"])
    for name in [m for m in ORDER if m in rows]:
        r, u = rows[name], rows[name]["usage"]
        m = r["metrics"]
        table.add(name, f"{pct(m['rouge_l'])}{ci(r, 'rouge_l')}", f"{pct(m['d_f1'])}{ci(r, 'd_f1')}", pct(m["dr"]),
                  pct(m.get("mrecall@5")), f"{u['llm_calls'] + u['cached_calls']:.2f}", f"{u['prompt_tokens']:.0f}",
                  f"{u['completion_tokens']:.0f}", f"{u['model_seconds']:.1f}")
    return table.markdown()


def verification_modes(per_q: dict, each_run: Path | None) -> str:
    """Batched (one call) against per-interpretation (one call each) verification of the same questions."""
    if each_run is None or "diva" not in per_q:
        return "(per-interpretation verification was not run)"
    each_results, each_q = load(each_run)
    batched, each = per_q["diva"], each_q["diva"]
    shared = sorted(set(batched) & set(each))
    same = sum(step(batched[q], "diva")["grade"] == step(each[q], "diva")["grade"] for q in shared)
    verdicts_same = sum(v1["covered"] == v2["covered"]
                        for q in shared
                        for v1, v2 in zip(step(batched[q], "diva")["verification"], step(each[q], "diva")["verification"],
                                          strict=False))
    verdicts = sum(len(step(batched[q], "diva")["verification"]) for q in shared)

    def cost(rows: dict, key: str) -> float:
        return mean(row["usage_by_stage"].get("verify", {}).get(key, 0.0) for row in rows.values())

    def calls(rows: dict) -> float:
        return mean(row["usage_by_stage"].get("verify", {}).get("llm_calls", 0.0)
                    + row["usage_by_stage"].get("verify", {}).get("cached_calls", 0.0) for row in rows.values())

    each_metrics = next(r["metrics"] for r in each_results["results"] if r["method"] == "diva")
    table = Table(["verification", "calls/q", "prompt tok/q", "model s/q", "D-F1", "DR"])
    for label, rows, metrics in (("batched (one call)", batched, None), ("each (one call per reading)", each,
                                                                         each_metrics)):
        m = metrics or {}
        table.add(label, f"{calls(rows):.2f}", f"{cost(rows, 'prompt_tokens'):.0f}", f"{cost(rows, 'model_seconds'):.1f}",
                  pct(m.get("d_f1")) if metrics else "see Table 1", pct(m.get("dr")) if metrics else "see Table 1")
    return table.markdown() + (f"\n\nSame grade on {same} of {len(shared)} questions; same verdict on {verdicts_same} "
                               f"of {verdicts} interpretations.")


def demonstrations(results: dict, per_q: dict, demos_run: Path | None) -> str:
    """Zero-shot (the main run) against the same methods with nearest-neighbour demonstrations."""
    if demos_run is None:
        return "(the run with demonstrations was not made)"
    demo_results, demo_q = load(demos_run)
    k = demo_results["settings"]["diva"]["demos"]
    zero = {r["method"]: r for r in results["results"]}
    shots = {r["method"]: r for r in demo_results["results"]}
    table = Table(["method", "demos", "R-L", "D-F1", "DR", "calls/q", "prompt tok/q", "model s/q"])
    for name in [m for m in ORDER if m in shots and m in zero]:
        for label, r in (("0", zero[name]), (str(k), shots[name])):
            m, u = r["metrics"], r["usage"]
            table.add(name, label, f"{pct(m['rouge_l'])}{ci(r, 'rouge_l')}", f"{pct(m['d_f1'])}{ci(r, 'd_f1')}",
                      pct(m["dr"]), f"{u['llm_calls'] + u['cached_calls']:.2f}", f"{u['prompt_tokens']:.0f}",
                      f"{u['model_seconds']:.1f}")
    lines = [*table.lines(), ""]
    for name in [m for m in ORDER if m in shots and m in zero]:
        both = {"demos": demo_q[name], "zero": per_q[name]}
        for metric in ("rouge_l", "d_f1"):
            lines.append(f"- {name}, {k} demos minus zero-shot, {metric}: {paired_text(both, 'demos', 'zero', metric)}")
    if {"diva", "vanilla-rag"} <= demo_q.keys():
        for metric in ("rouge_l", "d_f1"):
            lines.append(f"- with {k} demos, diva minus vanilla-rag, {metric}: "
                         f"{paired_text(demo_q, 'diva', 'vanilla-rag', metric)}")
    if "diva" in demo_q:
        grades = Counter(step(row, "diva")["grade"] for row in demo_q["diva"].values())
        readings = mean(len(step(row, "diva")["interpretations"]) for row in demo_q["diva"].values())
        lines.append(f"\nWith demonstrations Diva graded {', '.join(f'{g} {n}' for g, n in grades.most_common())} "
                     f"and used {readings:.2f} interpretations per question.")
    return "\n".join(lines)


def undefined(per_q: dict) -> str:
    rows = per_q.get("vanilla-rag") or next(iter(per_q.values()))
    n = sum(row["metrics"].get("d_f1") is None for row in rows.values())
    return (f"D-F1 is undefined for {n} of {len(rows)} questions (no gold disambiguation with a short answer); "
            "they count in R-L only.")


def table3(results: dict) -> str:
    rows = {r["method"]: r for r in results["results"]}
    table = Table(["retrieval", "method", "MRecall@5", "D-F1"])
    for name, label in [("vanilla-rag", "vanilla (the question)"), ("diva-rd", "RD (pseudo-interpretations)"),
                        ("diva-oracle", "oracle (gold disambiguated questions)")]:
        if name in rows:
            m = rows[name]["metrics"]
            table.add(label, name, f"{pct(m.get('mrecall@5'))}{ci(rows[name], 'mrecall@5')}",
                      f"{pct(m['d_f1'])}{ci(rows[name], 'd_f1')}")
    return table.markdown()


def cost(results: dict, per_q: dict) -> str:
    rows = {r["method"]: r["usage"] for r in results["results"]}
    lines = []
    if "toc" in per_q:
        expansions = mean(step(row, "clarification_tree")["expansions"] for row in per_q["toc"].values())
        nodes = mean(len(step(row, "clarification_tree")["nodes"]) for row in per_q["toc"].values())
        lines.append(f"ToC expanded {expansions:.2f} clarification nodes per question ({nodes:.2f} readings kept); "
                     "the paper reports about 5.5 steps and more than 12k prompt tokens per query with its larger "
                     "models and longer passages.")
    if "toc" in rows and "diva" in rows:
        ratio = rows["diva"]["prompt_tokens"] / rows["toc"]["prompt_tokens"]
        speed = rows["toc"]["model_seconds"] / rows["diva"]["model_seconds"]
        lines.append(f"Diva's prompt tokens per question are {ratio:.2f} of ToC's "
                     f"({rows['diva']['prompt_tokens']:.0f} vs {rows['toc']['prompt_tokens']:.0f}; the bound is 1/3: "
                     f"{'met' if ratio <= 1 / 3 else 'NOT met'}); ToC takes {speed:.1f}x Diva's model time.")
    return "\n".join(f"- {line}" for line in lines) or "(toc was not run)"


def table2(results: dict) -> str:
    rows = {r["method"]: r["metrics"] for r in results["results"]}
    table = Table(["row", "method", "R-L", "D-F1", "DR"])
    for name, label in ABLATION:
        if name in rows:
            m = rows[name]
            table.add(label, name, pct(m["rouge_l"]), pct(m["d_f1"]), pct(m["dr"]))
    return table.markdown()


def grades(per_q: dict) -> str:
    diva = per_q.get("diva", {})
    if not diva:
        return "(diva was not run)"
    steps = {qid: step(row, "diva") for qid, row in diva.items()}
    counts = Counter(s["grade"] for s in steps.values())
    fallback = sum(s["interpretation_fallback"] for s in steps.values())
    n_interp = mean(len(s["interpretations"]) for s in steps.values())
    lines = [f"Grades over {len(steps)} questions: " + ", ".join(f"{g} {counts.get(g, 0)}" for g in
                                                                  ("Useful", "PartialUseful", "Useless")) + ".",
             (f"Interpretations per question: {n_interp:.2f} on average; {fallback} question(s) got no usable "
             "interpretation and were treated as unambiguous.")]
    useless = [qid for qid, s in steps.items() if s["grade"] == "Useless"]
    if useless and "diva-rd" in per_q:
        closed = mean(diva[q]["metrics"]["d_f1"] or 0.0 for q in useless)
        rag = mean(per_q["diva-rd"][q]["metrics"]["d_f1"] or 0.0 for q in useless)
        lines.append(f"AG answered closed-book on the {len(useless)} Useless question(s): D-F1 there "
                     f"{100 * closed:.1f} (closed-book) vs {100 * rag:.1f} had it used the same pruned passages "
                     f"(diva-rd): the switch {'helped' if closed > rag else 'did not help' if closed < rag else 'made no difference'}.")
    covered = Counter(v["covered"] for s in steps.values() for v in s["verification"])
    lines.append(f"Verification verdicts ({steps and next(iter(steps.values()))['verification_mode']}): "
                 f"yes {covered.get(True, 0)}, no {covered.get(False, 0)}, unreadable {covered.get(None, 0)}.")
    return "\n".join(f"- {line}" for line in lines)


def paired(per_q: dict) -> str:
    table = Table(["pair", "metric", "mean difference [95% CI]", "wins / losses"])
    for a, b in [("diva", "vanilla-rag"), ("diva-rd", "vanilla-rag"), ("diva", "diva-rd")]:
        if a in per_q and b in per_q:
            for metric in ("d_f1", "rouge_l"):
                d, low, high, wins, losses = paired_diff(per_q, a, b, metric)
                table.add(f"{a} - {b}", metric, f"{100 * d:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]",
                          f"{wins} / {losses}")
    return table.markdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--title", default="Diva (paper 001) on ASQA dev")
    parser.add_argument("--discussion", type=Path, default=None)
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="runs whose other methods are added")
    parser.add_argument("--each-run", type=Path, default=None, help="a run of diva with diva.verification=each")
    parser.add_argument("--demos-run", type=Path, default=None, help="a run with diva.demos > 0 (same questions)")
    args = parser.parse_args()
    results, per_q = load(args.run)
    for extra in args.also:
        more, more_q = load(extra)
        if set(next(iter(more_q.values()))) != set(next(iter(per_q.values()))):
            raise SystemExit(f"{extra} holds other questions than {args.run}")
        results["results"] += [r for r in more["results"] if r["method"] not in per_q]
        per_q |= {name: rows for name, rows in more_q.items() if name not in per_q}
    discussion = args.discussion.read_text() if args.discussion else ""
    doc = f"""# {args.title}

Generated by `benchmarks/diva_report.py` from the run in `{args.run}` (results.json, predictions.jsonl).
Model `{results['setting']['model']}`, {results['n']} ASQA dev questions (seeded sample), passages pooled from the
sampled questions' own knowledge and qa-pair contexts (`--scope pooled`), top-{results['settings']['diva']['top_k']}
passages, verification `{results['settings']['diva']['verification']}`, {results['settings']['diva']['demos']} demonstrations.
Scores in %, 95% bootstrap CIs; DR = sqrt(mean R-L x mean D-F1); the D-F1 reader is the same model. MRecall@5 is
measured on the passages each method answered from (closed-book and query refinement use none).

## Table 1: accuracy and cost per question

{table1(results)}

{undefined(per_q)}

## Table 2: ablation (closed-book -> + RAG -> + RD -> + AG)

{table2(results)}

## Table 3: retrieval diversification

{table3(results)}

## Cost: Diva against ToC

{cost(results, per_q)}

## Verification and adaptive generation

{grades(per_q)}

### Batched against per-interpretation verification

{verification_modes(per_q, args.each_run)}

## Demonstrations (nearest-neighbour few-shot, `diva.demos`)

The paper prompts few-shot with demonstrations picked by nearest-neighbour search (after ToC). ASQA's train
split is not in the offline data, so the pool is ASQA dev itself; a question never gets itself as a
demonstration (matched by normalized text). Each demonstration shows a question, its readings and, in the answer
prompt, its long answer.

{demonstrations(results, per_q, args.demos_run)}

## Paired differences (per question)

{paired(per_q)}
{discussion}"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(doc)


if __name__ == "__main__":
    main()
