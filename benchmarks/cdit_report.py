"""CDIT (paper 003) report from `benchmarks/run_cdit.sh`: accuracy without and with CDIT per configuration,
the judge against RAMDocs' document labels, time spent judging, and the second pass after trimming.

Usage: python benchmarks/cdit_report.py --runs runs/cdit --out docs/results/cdit.md [--discussion FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import mean

from cdit_trim_recall import recall
from run_io import load, step

from tanglerag.config import Settings
from tanglerag.datasets.registry import load_dataset
from tanglerag.index.trim import TrimLog

ROOT = Path(__file__).resolve().parents[1]


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def labels() -> dict[str, str]:
    """Passage id -> RAMDocs document type (correct / misinformation / noise)."""
    _, examples = load_dataset("ramdocs")
    return {p.id: p.metadata.get("type", "") for ex in examples for p in ex.passages}


def judge_scores(rows: dict, types: dict[str, str]) -> dict[str, float]:
    """Discarding as a detector of misinformation + noise: precision, recall; share unreadable."""
    tp = fp = fn = unreadable = total = 0
    for row in rows.values():
        cdit = step(row, "cdit")
        if cdit is None:
            continue
        for judgment in cdit["judgments"]:
            bad = types.get(judgment["passage_id"]) in {"misinfo", "noise"}
            dropped = judgment["consistent"] is False
            total += 1
            unreadable += judgment["consistent"] is None
            tp += bad and dropped
            fp += dropped and not bad
            fn += bad and not dropped
    return {"precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / (tp + fn) if tp + fn else 0.0,
            "unreadable": unreadable / total if total else 0.0, "judged": total}


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
        judged |= {qid for rows in load(folder / "first")[1].values() for qid in rows}
    queries = [ex.question for ex in examples if ex.id not in judged]
    exact = PassageIndex.load(runs / "index-ramdocs-flat", embedder)
    truth = [{h.passage.id for h in exact.search(q, k)} for q in queries]

    lines = [f"| configuration | untouched queries | recall@{k} before trimming | after | cut links | separated pairs |",
             "|---|---|---|---|---|---|"]
    for folder in folders:
        kind = folder.name.split("-")[0]
        if not (folder / "index").exists() or not (runs / f"index-ramdocs-{kind}").exists():
            continue
        before = PassageIndex.load(runs / f"index-ramdocs-{kind}", embedder)
        after = PassageIndex.load(folder / "index", embedder)
        lines.append(f"| {folder.name} | {len(queries)} | {recall(before, queries, truth, k):.3f} | "
                     f"{recall(after, queries, truth, k):.3f} | "
                     f"{after.cut_link_count} | {len(after.trim.separated)} |")
    return "\n".join(lines)


def determiner_section(folders: list[Path]) -> str:
    """Judge calls of the first CDIT pass against a repeat of the same questions (the determiner recalls them)."""
    lines = ["| configuration | pass | questions with reused verdicts | reused verdicts/q | judge calls/q | judge s/q |",
             "|---|---|---|---|---|---|"]
    for folder in folders:
        if not (folder / "repeat" / "results.json").exists():
            continue
        for label in ("first", "repeat"):
            rows = load(folder / label)[1]["cdit"]
            steps = [step(row, "cdit") for row in rows.values()]
            judge = [row["usage_by_stage"].get("judge", {}) for row in rows.values()]
            lines.append(f"| {folder.name} | {label} | {sum(s['reused'] > 0 for s in steps)} of {len(steps)} | "
                         f"{mean(s['reused'] for s in steps):.2f} | "
                         f"{mean(j.get('llm_calls', 0) + j.get('cached_calls', 0) for j in judge):.2f} | "
                         f"{mean(j.get('model_seconds', 0.0) for j in judge):.1f} |")
    return "\n".join(lines) if len(lines) > 2 else "(no repeat pass)"


def curation_recall(path: Path) -> str:
    """The LLM-free curation pass of benchmarks/cdit_trim_recall.py: recall of untouched questions per k and index."""
    if not path.exists():
        return "(benchmarks/cdit_trim_recall.py not run)"
    data = json.loads(path.read_text())
    lines = [(f"`benchmarks/cdit_trim_recall.py`: {data['rows'][0]['judged_questions']} of {data['judged_of']} RAMDocs dev "
             f"questions judged by the {data['judge']} judge (top-{data['top_k']}, seed {data['seed']}), the other "
             f"{data['rows'][0]['untouched_questions']} never judged; recall@10 against exact search on the untrimmed "
             "Flat index. \"graph only\" leaves the separation table out: the cut HNSW links alone."), "",
             ("| index | k witnesses | recall@10 before | after | after, graph only | separated pairs | cut links "
             "| judge s/question |"), "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['index']} | {r['witnesses']} | {r['recall@10_before']:.3f} | {r['recall@10_after']:.3f} | "
                     f"{r['recall@10_after_graph_only']:.3f} | {r['separated_pairs']} | {r['cut_links']} | "
                     f"{r['seconds_per_judged_question']:.2f} |")
    return "\n".join(lines)


def seconds(rows: dict, stage: str) -> float:
    return mean(row["usage_by_stage"].get(stage, {}).get("model_seconds", 0.0) for row in rows.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--discussion", type=Path, default=None)
    args = parser.parse_args()
    types = labels()
    header = ("| configuration | n | concat acc | CDIT acc | diff | second pass (concat, trimmed index) | judge P / R "
              "(misinfo+noise) | unreadable | judge s/q | reused verdicts | separated pairs |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    folders = sorted(p for p in args.runs.iterdir() if (p / "first" / "results.json").exists())
    for folder in folders:
        results, per_q = load(folder / "first")
        acc = {r["method"]: r["metrics"].get("accuracy") for r in results["results"]}
        second = None
        if (folder / "second" / "results.json").exists():
            second = json.loads((folder / "second" / "results.json").read_text())["results"][0]["metrics"]["accuracy"]
        scores = judge_scores(per_q.get("cdit", {}), types)
        if folder.name.startswith("conflictqa"):  # no misinformation / noise labels: only accuracy applies
            scores = {**scores, "precision": None, "recall": None}
        reused = mean(step(row, "cdit")["reused"] for row in per_q.get("cdit", {}).values())
        separated = len(TrimLog(folder / "index").state().separated) if (folder / "index").exists() else 0
        diff = None if None in (acc.get("cdit"), acc.get("concat")) else acc["cdit"] - acc["concat"]
        lines.append(f"| {folder.name} | {results['n']} | {pct(acc.get('concat'))} | {pct(acc.get('cdit'))} | "
                     f"{'-' if diff is None else f'{100 * diff:+.1f}'} | {pct(second)} | {pct(scores['precision'])} / "
                     f"{pct(scores['recall'])} | {pct(scores['unreadable'])} | {seconds(per_q.get('cdit', {}), 'judge'):.1f}"
                     f" | {reused:.2f} | {separated} |")
    discussion = args.discussion.read_text() if args.discussion else ""
    doc = f"""# CDIT (paper 003) on RAMDocs dev, pooled into one index

Generated by `benchmarks/cdit_report.py` from `{args.runs}` (`benchmarks/run_cdit.sh`); rows named conflictqa-*
are conflictQA's StrategyQA half (memory and counter-memory evidence pooled). Accuracy: a gold answer
string contained in the output. The judge is scored as a detector of RAMDocs' misinformation and noise documents
(discarded = flagged). The second pass asks plain concat the same questions again on the index copy CDIT trimmed.

{chr(10).join(lines)}

## Does trimming break the index for everyone else?

The RAMDocs dev questions that no run judged, searched on each trimmed copy and on its untrimmed original,
against exact search on the untrimmed Flat index.

{untouched_recall(args.runs, folders)}

An LLM-free curation pass over more questions, to see the machinery at larger cut rates:

{curation_recall(ROOT / "docs/results/cdit_trim_recall.json")}

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
