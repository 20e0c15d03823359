#!/usr/bin/env bash
# Paper 000 (COrg) evaluation on RAMDocs dev: a seeded random sample of N questions (the file puts its
# 100 one-answer questions before the 150 two-answer ones), all of each question's own documents (at most
# 10), embedded model, greedy. Three runs share the LLM cache, so each resumes and reuses the others' calls:
#   pairwise   - COrg (paper's graph constructor) and the six baselines
#   extract    - COrg with our O(n) extraction graph
#   plural-llm - COrg with the LLM rewriting the question in plural form (graph calls cached)
#   answer-each - COrg answering each kept context in its own call (its calls are Separate's, cached)
# Usage: benchmarks/run_corg.sh [N_QUESTIONS [--set key=value ...]]  (extra options go to every run)
#   env RUNS="pairwise extract ..." picks runs (default: all four); OUT=NAME writes docs/results/NAME (default corg);
#   METHODS=a,b narrows the pairwise run (default: COrg and the six baselines).
#   The fresh sample of the report: OUT=corg_fresh RUNS="pairwise answer-each" METHODS=corg,separate \
#     benchmarks/run_corg.sh 50 --set eval.seed=2026
# Then:  .venv/bin/python benchmarks/corg_report.py --runs docs/results/corg [--fresh docs/results/corg_fresh]
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
N="${1:-50}"
shift || true
EXTRA=("$@")
OUT="${OUT:-corg}"
RUNS="${RUNS:-pairwise extract plural-llm answer-each}"
METHODS="${METHODS:-base,retrieve,summarize,corg,random,kmeans,separate}"
run() {  # NAME METHODS extra flags...
  local name="$1" methods="$2"; shift 2
  [[ " $RUNS " == *" $name "* ]] || return 0
  resume_run "runs/$OUT/$name" "docs/results/$OUT/$name"
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --methods "$methods" --random "$N" --top-k 10 \
    --scope own "$@" "${EXTRA[@]}" --out "runs/$OUT/$name" --json > /dev/null
  keep_run "runs/$OUT/$name" "docs/results/$OUT/$name"
}
# Base, Retrieve and Summarize first: with COrg's graph calls they share each question's context prefix
run pairwise "$METHODS" --set corg.graph=pairwise
run extract corg --set corg.graph=extract
run plural-llm corg --set corg.graph=pairwise --set corg.plural=llm
run answer-each corg --set corg.graph=pairwise --set corg.answer_each=true
