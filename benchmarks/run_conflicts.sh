#!/usr/bin/env bash
# Issue 50: the ledger (conflict reports by evidence the model does not judge) beside the peers, embedded model,
# greedy, each question's own documents (at most 10). Every run checkpoints each finished question, shares the LLM
# cache and resumes where it stopped; its folder is kept under docs/results/conflicts/<name>:
#   ledger        ledger on the RAMDocs dev peers sample (the 100 question ids of docs/results/peers)
#   vetted        vetted, the default method of ask (issue 69), on the same RAMDocs sample
#   ledger-prior  the same with the prior policy (one closed-book call) before show-all
#   report        concat with conflicts.report=true: a conflict report for a method that is not the ledger (its
#                 answer is concat's; the report costs one call per passage). The report reads the replay instead
#                 (benchmarks/ledger_replay.py concat-report: the stored concat answers and ledger claims, no model)
#   conflictqa    ledger and concat on conflictQA (StrategyQA half, memory beside counter-memory), a sample of 60
#   mixed         ledger and concat on the mixed suite of benchmarks/mixed_suite.py (10 per class and source: its
#                 first 60, the suite without the freshness rows, which the freshness run measures); MIXED_SAMPLE=K
#                 takes a seeded random K of them (the file is sorted by source: --head alone would take RAMDocs only)
#   freshness     ledger and concat on the freshness set (benchmarks/freshness_set.py), a sample of 100
#   freshness-v2-meta, freshness-v2-text   (issue 60) ledger and concat on all 120 rows of freshness v2
#                 (benchmarks/freshness_v2.py), answered from its shared MiniLM index (runs/freshness_v2/index-meta
#                 or index-text: dates in metadata or in the text), top-k the default: the commands of
#                 freshness_v2.py's docstring, which builds the indexes
#   asqa-false    (issue 60) ledger on 40 ASQA dev questions with two or more answers, each with its own passages
#                 (the ASQA loader gives the annotators' Wikipedia passages): false conflicts where the answers
#                 differ only because the question is ambiguous. The questions come from runs/conflicts/
#                 asqa-multi.jsonl, the copy's questions with two or more distinct answers and two or more passages
#                 (written here, no model), a seeded random 40 of them
# The stored runs were answered under the defaults of their time (each folder's run.json): a run resumed under other
# settings is refused, so pass theirs.
# Today's rules and their ablations on RAMDocs are re-scored without the model from the stored ledger runs' traces:
# benchmarks/ledger_replay.py (docs/results/conflicts/replay/<variant>).
# Usage: benchmarks/run_conflicts.sh [N [--set key=value ...]]   (N: the RAMDocs sample, default 100; env HEAD=K
#   answers only the first K questions of each run now, so a long run can be taken in pieces; RUNS="ledger report"
#   picks runs, and the issue 60 runs (freshness-v2-meta freshness-v2-text asqa-false) run only when named there;
#   DRY=1 prints each eval command instead of running it, and starts no model). Then:
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
ASQA="false_conflict_rate,conflict_recall,answer_recall,ramdocs_strict,unk,cited"
CONTEXT=(--top-k 10 --scope own)  # each question's own documents, at most 10; freshness v2 answers from an index
run() {  # NAME DATASET METHODS METRICS SAMPLE extra flags...  (SAMPLE =K: the file's first K, in order; all: every row)
  local name="$1" dataset="$2" methods="$3" metrics="$4" sample="$5"; shift 5
  [[ " $RUNS " == *" $name "* ]] || return 0
  local out="runs/conflicts/$name" pick=()
  if [[ "$sample" == all ]]; then pick=(${HEAD:+--head "$HEAD"}); elif [[ "$sample" == =* ]]; then
    pick=(--head "${HEAD:-${sample#=}}"); else pick=(--random "$sample" --head "${HEAD:-$sample}"); fi
  local cmd=(.venv/bin/tanglerag eval --dataset "$dataset" --methods "$methods" --metrics "$metrics" "${pick[@]}"
             "${CONTEXT[@]}" "$@" "${EXTRA[@]}" --out "$out" --json)
  if [[ -n "${DRY:-}" ]]; then
    printf '%q ' HF_HUB_OFFLINE=1 "${cmd[@]}"; echo
    return 0
  fi
  resume_run "$out" "docs/results/conflicts/$name"
  HF_HUB_OFFLINE=1 "${cmd[@]}" > /dev/null
  keep_run "$out" "docs/results/conflicts/$name"
}
run ledger ramdocs ledger "$RAMDOCS" "$N"
run vetted ramdocs vetted "$RAMDOCS" "$N"  # the default method (issue 69): run only when RUNS names it
run ledger-prior ramdocs ledger "$RAMDOCS" "$N" --set "ledger.policies=[witnesses, newest, authority, prior, show-all]"
run report ramdocs concat "$RAMDOCS" "$N" --set conflicts.report=true
run conflictqa conflictqa ledger,concat "$CONFLICTQA" 60
if [[ " $RUNS " == *" mixed "* ]]; then
  SUITE="runs/auto/mixed-10.jsonl"
  [[ -n "${DRY:-}" || -f "$SUITE" ]] || HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/mixed_suite.py --per-class 10 \
    --out "$SUITE"
  [[ ! -f "$SUITE" ]] || head -60 "$SUITE" > runs/auto/mixed-60.jsonl  # the suite the auto report measured, without
  # the freshness rows (under DRY=1 the suite may not be built yet)
  run mixed runs/auto/mixed-60.jsonl ledger,concat "$MIXED" "${MIXED_SAMPLE:-60}"
fi
run freshness freshness ledger,concat "$FRESH" 100
for variant in meta text; do  # the index the no-model baseline (freshness_v2.py baseline) reads, top-k the default
  index="runs/freshness_v2/index-$variant"
  if [[ " $RUNS " == *" freshness-v2-$variant "* && -z "${DRY:-}" && ! -f "$index/manifest.json" ]]; then
    echo "no index at $index: build it as benchmarks/freshness_v2.py's docstring says" >&2
    exit 2
  fi
  CONTEXT=(--index "$index")
  run "freshness-v2-$variant" benchmarks/data/freshness_v2_dev.jsonl ledger,concat "$FRESH" all
done
CONTEXT=(--top-k 10 --scope own)
if [[ " $RUNS " == *" asqa-false "* ]]; then
  ASQA_MULTI="runs/conflicts/asqa-multi.jsonl"
  [[ -f "$ASQA_MULTI" ]] || .venv/bin/python - "$ASQA_MULTI" <<'PY'
"""ASQA dev questions whose answers differ (two or more distinct, one per interpretation) and that come with two
or more passages (one passage cannot disagree with itself), as the ASQA loader reads them; the records unchanged."""
import json
import sys
from pathlib import Path

from tanglerag.datasets.registry import REGISTERED, load_dataset

source = REGISTERED.get("asqa")[0]()
kept = {e.id for e in load_dataset("asqa")[1] if len(e.answers) >= 2 and len(e.passages) >= 2}
out = Path(sys.argv[1])
out.parent.mkdir(parents=True, exist_ok=True)
lines = [line for line in source.read_text().splitlines() if line.strip() and json.loads(line)["sample_id"] in kept]
out.write_text("\n".join(lines) + "\n")
print(f"{len(lines)} ASQA questions with two or more answers and passages -> {out}", file=sys.stderr)
PY
  run asqa-false "$ASQA_MULTI" ledger "$ASQA" 40
fi
