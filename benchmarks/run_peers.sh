#!/usr/bin/env bash
# Issue 28: our methods beside the peers a user would pick instead (MADAM-RAG, Astute RAG) on RAMDocs dev: a seeded
# sample of N questions, each with all of its own documents (at most 10), embedded model, greedy. Two runs share the
# LLM cache, checkpoint every finished question and resume where they stopped:
#   main         concat, separate, corg, madam-rag, astute-rag
#   answer-each  COrg answering each kept context in its own call
#   support, answer-each-support  the two with corg.conflicts=support (an answer contradicted by a better-backed
#                one is dropped; no extra call, so these run from the cache of the two above)
#   madam-1      MADAM-RAG after its first round (madam.rounds=1: the agents alone, then the aggregator), from the
#                cache of main: what the debate rounds add
#   astute-repair  Astute RAG with its consolidation repaired under the schema (llm.structured_stages.consolidate=
#                repair): the 1.5B model copies the passages out instead of grouping them for most questions
# The stored runs were answered under the defaults of their time (each folder's run.json): a run resumed under other
# settings is refused, so pass theirs, e.g. --set "llm.structured_stages={distill: auto}" for main.
# Usage: benchmarks/run_peers.sh [N [--set key=value ...]]   (env HEAD=K answers only the first K of the sample now,
#   so a long run can be taken in pieces; RUNS="main" picks runs). Then:
#   .venv/bin/python benchmarks/peers_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
N="${1:-100}"
shift || true
EXTRA=("$@")
HEAD="${HEAD:-$N}"
RUNS="${RUNS:-main answer-each support answer-each-support madam-1 astute-repair}"
METRICS="ramdocs_strict,answer_recall,d_f1,misinfo_leak,noise_cited,ans,unk,cited"
run() {  # NAME METHODS extra flags...
  local name="$1" methods="$2"; shift 2
  [[ " $RUNS " == *" $name "* ]] || return 0
  resume_run "runs/peers/$name" "docs/results/peers/$name"
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --methods "$methods" --metrics "$METRICS" \
    --random "$N" --head "$HEAD" --top-k 10 --scope own --set corg.graph=pairwise "$@" "${EXTRA[@]}" \
    --out "runs/peers/$name" --json > /dev/null
  keep_run "runs/peers/$name" "docs/results/peers/$name"
}
run main concat,separate,corg,madam-rag,astute-rag
run answer-each corg --set corg.answer_each=true
run support corg --set corg.conflicts=support
run answer-each-support corg --set corg.answer_each=true --set corg.conflicts=support
run madam-1 madam-rag --set madam.rounds=1
run astute-repair astute-rag --set llm.structured_stages.consolidate=repair
