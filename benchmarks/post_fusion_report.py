"""Write docs/results/post_fusion.md from the runs of benchmarks/run_post_fusion.sh.

Tables per setting (EM/F1 with 95% bootstrap CIs, %Unk, %NM, cost per question), paired
bootstrap CIs for the paper's two claimed directions, and the paper's own numbers beside ours.
The hand-written discussion comes from benchmarks/post_fusion_discussion.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from run_io import load, paired_diff, step

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["concat", "post-fusion", "pruning", "summary", "concat+pf", "pf+concat"]
SETTINGS = {"gold-ensure": "With the gold passage (a correct document guaranteed in the top-5)",
            "gold-exclude": "Without the gold passage (correct documents removed; misinformation and noise remain; "
                            "the paper's 'without' is plain retrieval, see the discussion)",
            "gold-ensure-closedbook": "With the gold passage, after the paper's closed-book filter"}
# Paper Table 1 (with gold) / Table 2 (without), NQ, LLama2-chat (the smallest model they report): EM, %Unk, %NM.
PAPER = {
    "gold-ensure": {"concat": (26.9, 12.9, None), "post-fusion": (27.5, 2.8, 27.8), "pruning": (27.8, 10.9, None),
                    "summary": (28.1, 9.8, None), "concat+pf": (30.3, 1.7, 3.8), "pf+concat": (29.6, 2.7, 2.3)},
    "gold-exclude": {"concat": (24.6, 18.2, None), "post-fusion": (24.9, 13.8, 15.3), "concat+pf": (28.0, 3.2, 3.6), "pf+concat": (27.9, 8.7, 4.8), "pruning": (25.7, 12.7, None),
                     "summary": (26.3, 10.3, None)},
}



def fired(row: dict) -> bool | None:
    """Whether Concat+PF fell back to post-fusion (None for other methods)."""
    fallback = step(row, "fallback")
    return fallback["fired"] if fallback else None

def llm_seconds(per_q: dict, method: str, qid: str) -> float:
    """Model time a method costs on a question, cached or not.

    Runs record ``model_seconds`` (each call's original model time, kept in the cache); runs made
    before that field existed only have wall time, which is ~0 for calls another method already
    made, so there the multi-round methods' cost is composed from the fresh calls they reuse.
    """
    recorded = per_q[method][qid]["usage"].get("model_seconds")
    if recorded:
        return recorded
    def stage(m: str, name: str) -> float:
        return per_q[m][qid]["usage_by_stage"].get(name, {}).get("seconds", 0.0)

    if method == "concat+pf":
        fallback = fired(per_q[method][qid])
        return stage("concat", "generate") + (stage("post-fusion", "post_fusion") if fallback else 0.0)
    if method == "pf+concat":
        return stage("post-fusion", "post_fusion") + stage(method, "distill")
    row = per_q[method][qid]["usage_by_stage"]
    return sum(v["seconds"] for k, v in row.items() if k != "retrieve")


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def table(results: dict, per_q: dict, timing: dict | None) -> str:
    out = Table(["method", "EM [95% CI]", "F1 [95% CI]", "%Unk", "%NM", "%misled", "calls/q", "prompt tok/q",
                 "compl. tok/q", "model s/q"])
    by_name = {r["method"]: r for r in results["results"]}
    for name in METHODS:
        r = by_name.get(name)
        if r is None:
            continue
        m, u, ci = r["metrics"], r["usage"], r["ci"]
        em_ci = f"{pct(m['em'])} [{pct(ci['em'][0])}, {pct(ci['em'][1])}]"
        f1_ci = f"{pct(m['f1'])} [{pct(ci['f1'][0])}, {pct(ci['f1'][1])}]"
        calls = u["llm_calls"] + u["cached_calls"]
        if timing is not None:
            seconds = timing.get(name)
        else:
            seconds = np.mean([llm_seconds(per_q, name, qid) for qid in per_q[name]])
        seconds_text = "-" if seconds is None else f"{seconds:.1f}"
        out.add(name, em_ci, f1_ci, pct(m["unk"]), pct(m["nm"]), pct(m.get("misled")), f"{calls:.2f}",
                f"{u['prompt_tokens']:.0f}", f"{u['completion_tokens']:.1f}", seconds_text)
    return out.markdown()


def directions(per_q: dict, results: dict) -> str:
    by_name = {r["method"]: r["metrics"] for r in results["results"]}
    out = []
    for a, b, claim in [("concat+pf", "concat", "Concat+PF beats Concat in EM"),
                        ("pf+concat", "post-fusion", "PF+Concat beats plain post-fusion voting in EM")]:
        if a not in per_q or b not in per_q:
            continue
        mean, low, high, wins, losses = paired_diff(per_q, a, b, "em")
        if wins == losses == 0:
            verdict = "no difference: the same EM on every question"
        else:
            verdict = "holds" if low > 0 else ("reversed" if high < 0 else "not resolved at this n (CI spans 0)")
        out.append(f"- {claim}: EM difference {100 * mean:+.1f} points, paired 95% CI "
                   f"[{100 * low:+.1f}, {100 * high:+.1f}]; {wins} questions better, {losses} worse -> **{verdict}**.")
    if "concat+pf" in by_name and "concat" in by_name:
        out.append(f"- Unknowns: Concat {pct(by_name['concat']['unk'])}% vs Concat+PF "
                   f"{pct(by_name['concat+pf']['unk'])}% (the paper: the fallback removes most unknowns).")
    fallback = [fired(row) for row in per_q.get("concat+pf", {}).values()]
    if fallback:
        out.append(f"- Concat+PF fell back to post-fusion on {sum(bool(f) for f in fallback)} of {len(fallback)} "
                   "questions; the rest cost exactly one concatenation call.")
    return "\n".join(out)


def paper_rows(setting: str) -> str:
    ref = PAPER.get(setting, {})
    if not ref:
        return ""
    table = Table(["method", "paper EM", "paper %Unk", "paper %NM"])
    for name in METHODS:
        if name in ref:
            em, unk, nm = ref[name]
            table.add(name, em, unk, "-" if nm is None else nm)
    return table.markdown()


def before_after(before: tuple[dict, dict], after: tuple[dict, dict]) -> str:
    """EM, F1 and %Unk per method in the earlier run (concat with its cited prompt, gold passage put last) and now,
    with the paired change in EM over the questions both runs answered."""
    (old_results, old_q), (new_results, new_q) = before, after
    old = {r["method"]: r["metrics"] for r in old_results["results"]}
    new = {r["method"]: r["metrics"] for r in new_results["results"]}
    table = Table(["method", "EM before", "EM now", "EM now - before, points [95% CI]", "F1 before", "F1 now",
                   "%Unk before", "%Unk now"])
    for name in [m for m in METHODS if m in old and m in new]:
        shared = old_q[name].keys() & new_q[name].keys()
        pair = {"now": {q: new_q[name][q] for q in shared}, "before": {q: old_q[name][q] for q in shared}}
        d, lo, hi = (100 * v for v in paired_diff(pair, "now", "before", "em")[:3])
        table.add(name, pct(old[name]["em"]), pct(new[name]["em"]), f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]",
                  pct(old[name]["f1"]), pct(new[name]["f1"]), pct(old[name]["unk"]), pct(new[name]["unk"]))
    return table.markdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs/post_fusion",
                        help="run folders; the committed copies are in docs/results/post_fusion")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/post_fusion.md")
    parser.add_argument("--discussion", type=Path, default=ROOT / "benchmarks/post_fusion_discussion.md")
    parser.add_argument("--before", type=Path, default=ROOT / "docs/results/post_fusion_v1",
                        help="the runs made before concat shared post-fusion's prompt and gold went to a random place")
    args = parser.parse_args()
    parts = ["# Answer integration: concatenation, post-fusion and their combinations (paper 004)", "",
             "Reproduce: `benchmarks/run_post_fusion.sh 60 && .venv/bin/python benchmarks/post_fusion_report.py --runs docs/results/post_fusion`. Per-question predictions (answers, pools, raw outputs, usage by stage) are in `docs/results/post_fusion/*/predictions.jsonl`.",
             ""]
    for setting, title in SETTINGS.items():
        run = args.runs / setting
        if not (run / "results.json").exists():
            continue
        results, per_q = load(run)
        s = results["setting"]
        timing_file = run / "timing.json"
        timing = json.loads(timing_file.read_text())["model_seconds_per_question"] if timing_file.exists() else None
        if s["closed_book_filter"]:
            timing = {}  # the same calls as the unfiltered run: its table gives their cost
        parts += [f"## {title}", "",
                  (f"RAMDocs dev, first {results['n']} questions; top-{s['top_k']} of each question's own documents "
                  f"ranked by MiniLM (scope `{s['passage_scope']}`, gold `{s['gold']}`"
                  f"{', closed-book filter: kept ' + str(results['n']) + ' of ' + str(s['loaded']) if s['closed_book_filter'] else ''}"
                  f"); model `{s['model']}`, greedy decoding. %misled: the answer repeats one of the question's known "
                  "wrong answers (over the questions that have them). Rates in %; cost is per question (calls include cache hits, since they "
                  "measure the method, not this run; model s/q is the measured model time of the calls the method makes, "
                  "cached or not; - where the same calls are costed in another table)."), "",
                  table(results, per_q, timing), "",
                  *([f"model s/q here: {json.loads(timing_file.read_text())['note']}.", ""]
                    if timing_file.exists() and timing else []),
                  "Paper directions, measured here:", "", directions(per_q, results), ""]
        earlier = args.before / setting
        if (earlier / "results.json").exists() and earlier.resolve() != run.resolve():
            intro = ("Against the earlier run of this setting (concat with its own cited prompt; an ensured gold "
                     "passage always put last):")
            parts += [intro, "", before_after(load(earlier), (results, per_q)), ""]
        ref = paper_rows(setting)
        if ref:
            parts += ["The paper's numbers (NQ, LLaMA-2, its Table 1/2) for comparison of directions, not levels:",
                      "", ref, ""]
    if args.discussion.exists():
        parts += [args.discussion.read_text().strip(), ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(parts))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
