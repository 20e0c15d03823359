#!/usr/bin/env bash
# Issue 50: the ledger (conflict reports by evidence the model does not judge) beside the peers, embedded model,
# greedy, each question's own documents (at most 10). Every run checkpoints each finished question, shares the LLM
# cache and resumes where it stopped; its folder is kept under docs/results/conflicts/<name>:
#   ledger        ledger on the RAMDocs dev peers sample (the 100 question ids of docs/results/peers)
#   ledger-prior  the same with the prior policy (one closed-book call) before show-all
#   report        concat with conflicts.report=true: a conflict report for a method that is not the ledger (its
#                 answer is concat's; the report costs one call per passage). The report reads the replay instead
#                 (benchmarks/ledger_replay.py concat-report: the stored concat answers and ledger claims, no model)
#   conflictqa    ledger and concat on conflictQA (StrategyQA half, memory beside counter-memory), a sample of 60
#   mixed         ledger and concat on the mixed suite of benchmarks/mixed_suite.py (10 per class and source: its
#                 first 60, the suite without the freshness rows, which the freshness run measures); MIXED_SAMPLE=K
#                 takes a seeded random K of them (the file is sorted by source: --head alone would take RAMDocs only)
#   freshness     ledger and concat on the freshness set (benchmarks/freshness_set.py), a sample of 100
# The stored runs were answered under the defaults of their time (each folder's run.json): a run resumed under other
# settings is refused, so pass theirs.
# Today's rules and their ablations on RAMDocs are re-scored without the model from the stored ledger runs' traces:
# benchmarks/ledger_replay.py (docs/results/conflicts/replay/<variant>).
# Usage: benchmarks/run_conflicts.sh [N [--set key=value ...]]   (N: the RAMDocs sample, default 100; env HEAD=K
#   answers only the first K questions of each run now, so a long run can be taken in pieces; RUNS="ledger report"
#   picks runs; DRY=1 prints each eval command instead of running it, and starts no model). Then:
#   .venv/bin/python benchmarks/conflicts_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
N="${1:-100}"
shift || true
EXTRA=("$@")
RUNS="${RUNS:-ledger ledger-prior report conflictqa mixed freshness}"
RAMDOCS="ramdocs_strict,answer_recall,misinfo_leak,noise_cited,unk,cited,conflict_recall,false_conflict_rate"
CONFLICTQA="ramdocs_strict,answer_recall,misinfo_leak,unk,cited,conflict_recall,false_conflict_rate"
MIXED="tangle_score,answer_recall,misinfo_leak,ramdocs_strict,noise_cited,unk,cited,conflict_recall,false_conflict_rate"
FRESH="as_of_correct,ramdocs_strict,answer_recall,misinfo_leak,unk,cited,conflict_recall,false_conflict_rate"
run() {  # NAME DATASET METHODS METRICS SAMPLE extra flags...  (SAMPLE =K: the file's first K, in order)
  local name="$1" dataset="$2" methods="$3" metrics="$4" sample="$5"; shift 5
  [[ " $RUNS " == *" $name "* ]] || return 0
  local out="runs/conflicts/$name" pick=()
  if [[ "$sample" == =* ]]; then pick=(--head "${HEAD:-${sample#=}}"); else
    pick=(--random "$sample" --head "${HEAD:-$sample}"); fi
  local cmd=(.venv/bin/tanglerag eval --dataset "$dataset" --methods "$methods" --metrics "$metrics" "${pick[@]}"
             --top-k 10 --scope own "$@" "${EXTRA[@]}" --out "$out" --json)
  if [[ -n "${DRY:-}" ]]; then
    printf '%q ' HF_HUB_OFFLINE=1 "${cmd[@]}"; echo
    return 0
  fi
  resume_run "$out" "docs/results/conflicts/$name"
  HF_HUB_OFFLINE=1 "${cmd[@]}" > /dev/null
  keep_run "$out" "docs/results/conflicts/$name"
}
run ledger ramdocs ledger "$RAMDOCS" "$N"
run ledger-prior ramdocs ledger "$RAMDOCS" "$N" --set "ledger.policies=[witnesses, newest, authority, prior, show-all]"
run report ramdocs concat "$RAMDOCS" "$N" --set conflicts.report=true
run conflictqa conflictqa ledger,concat "$CONFLICTQA" 60
if [[ " $RUNS " == *" mixed "* ]]; then
  SUITE="runs/auto/mixed-10.jsonl"
  [[ -n "${DRY:-}" || -f "$SUITE" ]] || HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/mixed_suite.py --per-class 10 \
    --out "$SUITE"
  head -60 "$SUITE" > runs/auto/mixed-60.jsonl  # the suite the auto report measured, without the freshness rows
  run mixed runs/auto/mixed-60.jsonl ledger,concat "$MIXED" "${MIXED_SAMPLE:-60}"
fi
run freshness freshness ledger,concat "$FRESH" 100
