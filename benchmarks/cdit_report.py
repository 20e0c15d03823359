"""CDIT (paper 003) report from `benchmarks/run_cdit.sh`: accuracy without and with CDIT per configuration,
the judge against RAMDocs' document labels, time spent judging, and the second pass after trimming.

Usage: python benchmarks/cdit_report.py --runs runs/cdit --out docs/results/cdit.md [--discussion FILE]
"""

from __future__ import annotations

import argparse
import json
from functools import cache
from pathlib import Path
from statistics import mean

from cdit_trim_recall import recall
from run_io import load, paired_text, step

from tanglerag.datasets.registry import load_dataset
from tanglerag.index.trim import TrimLog
from tanglerag.settings import Settings
from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
read_pass = cache(load)  # the sections read the same passes: each folder is parsed once


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def labels() -> dict[str, str]:
    """Passage id -> RAMDocs document type (correct / misinformation / noise)."""
    _, examples = load_dataset("ramdocs")
    return {p.id: p.metadata.get("type", "") for ex in examples for p in ex.passages}


KINDS = ("correct", "misinfo", "noise", "other")  # RAMDocs document types; "other": another question's passage


def judge_counts(rows: dict, types: dict[str, str]) -> dict[str, list[int]]:
    """Per passage kind, [judged, discarded, unreadable] over one CDIT pass. Pooled retrieval brings other questions'
    passages, off-topic for this one: a kind of their own."""
    counts = {kind: [0, 0, 0] for kind in KINDS}
    for qid, row in rows.items():
        for judgment in step(row, "cdit")["judgments"]:
            pid = judgment["passage_id"]
            kind = types.get(pid, "correct") if pid.startswith(f"{qid}-") else "other"
            entry = counts.get(kind, counts["correct"])
            entry[0] += 1
            entry[1] += judgment["consistent"] is False
            entry[2] += judgment["consistent"] is None
    return counts


def detector(counts: dict[str, list[int]], bad: set[str], among: set[str]) -> tuple[float | None, float | None]:
    """Precision and recall of "discarded" as a detector of the ``bad`` kinds, counting only passages of ``among``."""
    tp = sum(counts[k][1] for k in bad & among)
    flagged = sum(counts[k][1] for k in among)
    positives = sum(counts[k][0] for k in bad & among)
    return (tp / flagged if flagged else None, tp / positives if positives else None)


def judge_table(folders: list[Path], types: dict[str, str]) -> str:
    table = Table(["configuration", "judged", "discarded: correct", "misinfo", "noise", "other questions'", "unreadable",
                   "P / R: own misinfo+noise", "P / R: off-topic (noise + other)"])
    for folder in folders:
        if folder.name.startswith("conflictqa"):  # no misinformation / noise labels
            continue
        rows = read_pass(folder / "first")[1].get("cdit", {})
        if not rows:
            continue
        c = judge_counts(rows, types)
        judged = sum(v[0] for v in c.values())
        rate = {k: pct(c[k][1] / c[k][0] if c[k][0] else None) for k in KINDS}
        own = detector(c, {"misinfo", "noise"}, {"correct", "misinfo", "noise"})
        off = detector(c, {"noise", "other"}, set(KINDS))
        table.add(folder.name, judged, *(f"{rate[k]} (of {c[k][0]})" for k in KINDS),
                  pct(sum(v[2] for v in c.values()) / judged if judged else None), f"{pct(own[0])} / {pct(own[1])}",
                  f"{pct(off[0])} / {pct(off[1])}")
    return table.markdown()


def untouched_recall(runs: Path, folders: list[Path], k: int = 10) -> str:
    """Recall@k against exact (Flat, untrimmed) search of the RAMDocs questions no run judged, before and after."""
    from tanglerag.embeddings import Embedder
    from tanglerag.index.passage_index import PassageIndex

    if not (runs / "index-ramdocs-flat").exists():
        return "(no pristine flat index)"
    folders = [f for f in folders if not f.name.startswith("conflictqa")]
    embedder = Embedder(Settings.load().embedding)
    _, examples = load_dataset("ramdocs")
    judged = set()
    for folder in folders:
        judged |= {qid for rows in read_pass(folder / "first")[1].values() for qid in rows}
    queries = [ex.question for ex in examples if ex.id not in judged]
    exact = PassageIndex.load(runs / "index-ramdocs-flat", embedder)
    truth = [{h.passage.id for h in exact.search(q, k)} for q in queries]

    table = Table(["configuration", "untouched queries", f"recall@{k} before trimming", "after", "cut links",
                   "separated pairs"])
    for folder in folders:
        kind = folder.name.split("-")[0]
        if not (folder / "index").exists() or not (runs / f"index-ramdocs-{kind}").exists():
            continue
        before = PassageIndex.load(runs / f"index-ramdocs-{kind}", embedder)
        after = PassageIndex.load(folder / "index", embedder)
        table.add(folder.name, len(queries), f"{recall(before, queries, truth, k):.3f}",
                  f"{recall(after, queries, truth, k):.3f}", after.cut_link_count, len(after.trim.separated))
    return table.markdown()


def determiner_section(folders: list[Path]) -> str:
    """Judge calls of the first CDIT pass against a repeat of the same questions (the determiner recalls them)."""
    table = Table(["configuration", "pass", "questions with reused verdicts", "reused verdicts/q", "judge calls/q",
                   "judge s/q"])
    for folder in folders:
        if not (folder / "repeat" / "results.json").exists():
            continue
        for label in ("first", "repeat"):
            rows = read_pass(folder / label)[1]["cdit"]
            steps = [step(row, "cdit") for row in rows.values()]
            table.add(folder.name, label, f"{sum(s['reused'] > 0 for s in steps)} of {len(steps)}",
                      f"{mean(s['reused'] for s in steps):.2f}", f"{mean(map(judge_calls, rows.values())):.2f}",
                      f"{seconds(rows, 'judge'):.1f}")
    return table.markdown() if table.rows else "(no repeat pass)"


def curation_recall(path: Path) -> str:
    """The LLM-free curation pass of benchmarks/cdit_trim_recall.py: recall of untouched questions per k and index."""
    if not path.exists():
        return "(benchmarks/cdit_trim_recall.py not run)"
    data = json.loads(path.read_text())
    lines = [(f"`benchmarks/cdit_trim_recall.py`: {data['rows'][0]['judged_questions']} of {data['judged_of']} RAMDocs dev "
             f"questions judged by the {data['judge']} judge (top-{data['top_k']}, seed {data['seed']}), the other "
             f"{data['rows'][0]['untouched_questions']} never judged; recall@10 against exact search on the untrimmed "
             "Flat index. \"graph only\" leaves the separation table out: the cut HNSW links alone."), ""]
    table = Table(["index", "k witnesses", "recall@10 before", "after", "after, graph only", "separated pairs",
                   "cut links", "judge s/question"])
    for r in data["rows"]:
        table.add(r["index"], r["witnesses"], f"{r['recall@10_before']:.3f}", f"{r['recall@10_after']:.3f}",
                  f"{r['recall@10_after_graph_only']:.3f}", r["separated_pairs"], r["cut_links"],
                  f"{r['seconds_per_judged_question']:.2f}")
    return "\n".join([*lines, *table.lines()])


def verdicts(rows: dict) -> dict[tuple[str, str], bool | None]:
    """(question id, passage id) -> the judge's verdict, in one CDIT pass."""
    return {(qid, j["passage_id"]): j["consistent"] for qid, row in rows.items() for j in step(row, "cdit")["judgments"]}


def judge_agreement(folders: list[Path], a: str, b: str, b_field: str = "model_seconds") -> str:
    """Two judges on the (question, passage) pairs both judged in the same setting: run ``a`` against run ``b``."""
    by_name = {f.name: f for f in folders}
    if not {a, b} <= set(by_name):
        return f"(needs the {a} and {b} runs)"
    a_rows = read_pass(by_name[a] / "first")[1]["cdit"]
    b_rows = read_pass(by_name[b] / "first")[1]["cdit"]
    va, vb = verdicts(a_rows), verdicts(b_rows)
    both = [key for key in va if key in vb and va[key] is not None and vb[key] is not None]
    agree = sum(va[k] == vb[k] for k in both)
    drop_a = sum(va[k] is False for k in both)
    drop_b = sum(vb[k] is False for k in both)
    kappa = "-"
    if both:
        p_o = agree / len(both)
        p_e = (drop_a * drop_b + (len(both) - drop_a) * (len(both) - drop_b)) / len(both) ** 2
        kappa = f"{(p_o - p_e) / (1 - p_e):.2f}" if p_e < 1 else "-"

    def share(count: int) -> str:
        return pct(count / len(both) if both else None)

    table = Table(["pairs judged by both", "agreement", "Cohen's kappa", f"{a} discards", f"{b} discards",
                   f"{a} judge s/q", f"{b} judge s/q"])
    table.add(len(both), share(agree), kappa, share(drop_a), share(drop_b), f"{seconds(a_rows, 'judge'):.2f}",
              f"{seconds(b_rows, 'judge', b_field):.2f}")
    return table.markdown()


def topk_section(folders: list[Path]) -> str:
    """CDIT against concat as top-k grows (flat index, one judge call per passage), on the questions every top-k
    run answered, so the rows differ only in k."""
    series = {int(f.name.removeprefix("flat-k")): f for f in folders
              if f.name.startswith("flat-k") and f.name.removeprefix("flat-k").isdigit()}
    if len(series) < 2:
        return "(needs flat-kN runs for two or more N)"
    runs = {k: read_pass(series[k] / "first")[1] for k in sorted(series)}
    common = set.intersection(*(set(per_q["cdit"]) & set(per_q["concat"]) for per_q in runs.values()))
    table = Table(["top-k", "concat acc", "CDIT acc", "CDIT - concat [95% CI]", "passages kept by the judge / q",
                   "judge s/q", "concat prompt tokens/q", "CDIT prompt tokens/q (judge + answer)"])
    for k, per_q in runs.items():
        sub = {m: {q: rows[q] for q in common} for m, rows in per_q.items() if m in ("concat", "cdit")}
        kept = mean(sum(j["consistent"] is not False for j in step(r, "cdit")["judgments"]) for r in sub["cdit"].values())
        tokens = {m: mean(r["usage"].get("prompt_tokens", 0) for r in rows.values()) for m, rows in sub.items()}
        acc = {m: mean(r["metrics"]["accuracy"] for r in rows.values()) for m, rows in sub.items()}
        table.add(k, pct(acc["concat"]), pct(acc["cdit"]), paired_text(sub, "cdit", "concat", "accuracy", unit=""),
                  f"{kept:.1f}", f"{seconds(sub['cdit'], 'judge'):.1f}", f"{tokens['concat']:.0f}",
                  f"{tokens['cdit']:.0f}")
    return "\n".join([f"{len(common)} questions (the first of the seeded sample) answered at every top-k.", "",
                      *table.lines()])


def second_pass_retrieval(folders: list[Path]) -> str:
    """Does retrieval alone, on the trimmed copy, now leave out what the judge discarded, and keep what it kept?"""
    table = Table(["configuration", "separated pairs", "judge-discarded passages still retrieved",
                   "judge-kept passages still retrieved", "questions whose retrieval changed"])
    for folder in folders:
        if not (folder / "second" / "results.json").exists():
            continue
        cdit = read_pass(folder / "first")[1]["cdit"]
        again = read_pass(folder / "second")[1]["concat"]
        dropped = kept = dropped_back = kept_back = changed = 0
        for qid, row in cdit.items():
            now = set(again[qid]["passage_ids"])
            judged = step(row, "cdit")["judgments"]
            changed += now != {j["passage_id"] for j in judged}
            for j in judged:
                if j["consistent"] is False:
                    dropped += 1
                    dropped_back += j["passage_id"] in now
                else:
                    kept += 1
                    kept_back += j["passage_id"] in now
        separated = len(TrimLog(folder / "index").state().separated)
        table.add(folder.name, separated, f"{pct(dropped_back / dropped if dropped else None)} (of {dropped})",
                  f"{pct(kept_back / kept if kept else None)} (of {kept})", f"{changed} of {len(cdit)}")
    return table.markdown()


def judging_time(folders: list[Path]) -> str:
    """The paper's Table 4: time the judge takes over a whole question set, against CDIT's whole time."""
    table = Table(["configuration", "questions", "judge calls", "judge model s (total)",
                   "judge share of CDIT's model time"])
    for folder in folders:
        rows = read_pass(folder / "first")[1].get("cdit", {})
        if not rows:
            continue
        calls = sum(map(judge_calls, rows.values()))
        judge = sum(r["usage_by_stage"].get("judge", {}).get("model_seconds", 0.0) for r in rows.values())
        total = sum(r["usage"].get("model_seconds", 0.0) for r in rows.values())
        table.add(folder.name, len(rows), f"{calls:.0f}", f"{judge:.0f}", pct(judge / total if total else None))
    return table.markdown()


def judge_calls(row: dict) -> float:
    """Judge calls of one question, made or answered from the cache."""
    judge = row["usage_by_stage"].get("judge", {})
    return judge.get("llm_calls", 0) + judge.get("cached_calls", 0)


def seconds(rows: dict, stage: str, field: str = "model_seconds") -> float:
    return mean(row["usage_by_stage"].get(stage, {}).get(field, 0.0) for row in rows.values()) if rows else 0.0


def accuracy_table(folders: list[Path]) -> str:
    """Per configuration: concat and CDIT on the first pass, concat again on the trimmed copy, and what judging cost."""
    table = Table(["configuration", "n", "concat acc", "CDIT acc", "CDIT - concat [95% CI]",
                   "second pass: concat on the trimmed index (change vs first concat [95% CI])", "judge calls/q",
                   "judge s/q", "reused verdicts/q", "separated pairs"])
    for folder in folders:
        results, per_q = read_pass(folder / "first")
        acc = {r["method"]: r["metrics"].get("accuracy") for r in results["results"]}
        second = "-"
        if (folder / "second" / "results.json").exists():
            again = read_pass(folder / "second")[1]["concat"]
            both = {"first": per_q["concat"], "second": again}
            second = (f"{pct(mean(r['metrics']['accuracy'] for r in again.values()))} "
                      f"({paired_text(both, 'second', 'first', 'accuracy', unit='')})")
        rows = per_q.get("cdit", {})
        reused = mean(step(row, "cdit")["reused"] for row in rows.values())
        separated = len(TrimLog(folder / "index").state().separated) if (folder / "index").exists() else 0
        diff = paired_text(per_q, "cdit", "concat", "accuracy", unit="") if {"cdit", "concat"} <= set(per_q) else "-"
        table.add(folder.name, results["n"], pct(acc.get("concat")), pct(acc.get("cdit")), diff, second,
                  f"{mean(map(judge_calls, rows.values())):.1f}", f"{seconds(rows, 'judge'):.1f}", f"{reused:.2f}",
                  separated)
    return table.markdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--discussion", type=Path, default=None)
    args = parser.parse_args()
    types = labels()
    folders = sorted(p for p in args.runs.iterdir() if (p / "first" / "results.json").exists())

    discussion = args.discussion.read_text() if args.discussion else ""
    doc = f"""# CDIT (paper 003) on RAMDocs dev, pooled into one index

Generated by `benchmarks/cdit_report.py` from `{args.runs}` (`benchmarks/run_cdit.sh`); rows named conflictqa-*
are conflictQA's StrategyQA half (memory and counter-memory evidence pooled). Accuracy: a gold answer
string contained in the output. The second pass asks plain concat the same questions again on the index copy CDIT trimmed.

{accuracy_table(folders)}

### The second pass: what retrieval alone now returns

The trimmed copy's top-k for the same questions, against the passages the judge saw on the first pass (a
separated pair is walked in rank order: the later one is dropped, whichever the judge discarded).

{second_pass_retrieval(folders)}

## As top-k grows

{topk_section(folders)}

One batched judge call for all of a question's passages (`cdit.batched`) against one call per passage, at top-k 20:

{judge_agreement(folders, "flat-k20", "flat-k20-batched")}

## The judge against RAMDocs' document labels

Share of each kind of retrieved passage the judge discarded (first CDIT pass). A question's own documents are
labelled correct, misinformation or noise; pooled retrieval also brings other questions' passages, which are
off-topic for it. Precision / recall of "discarded" as a detector of own misinformation + noise (the labels the
issue names), and of off-topic passages (noise + other questions'), which is what a consistency judge looks for.

{judge_table(folders, types)}

## Does trimming break the index for everyone else?

The RAMDocs dev questions that no run judged, searched on each trimmed copy and on its untrimmed original,
against exact search on the untrimmed Flat index.

{untouched_recall(args.runs, folders)}

An LLM-free curation pass over more questions, to see the machinery at larger cut rates:

{curation_recall(ROOT / "docs/results/cdit_trim_recall.json")}

## Time spent judging (the paper's Table 4)

Model seconds on 2 CPU threads (Qwen2.5-Coder-1.5B, Q4_K_M), first CDIT pass of each configuration; cached calls
keep the time measured when they were made.

{judging_time(folders)}

## spaCy judge against the LLM judge

Same index, questions and top-k (flat-k10 vs flat-k10-spacy); the spaCy judge uses no LLM, so its time is wall
seconds.

{judge_agreement(folders, "flat-k10", "flat-k10-spacy", "seconds")}

## The determiner: a question judged before is not judged again

The same questions asked through CDIT a second time on the same index (`cdit.reuse_threshold`
= {Settings.load().cdit.reuse_threshold}): verdicts come from the determiner's memory instead of judge calls.

{determiner_section(folders)}
{discussion}"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(doc)
    print(doc)


if __name__ == "__main__":
    main()
