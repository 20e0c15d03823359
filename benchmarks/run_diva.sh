#!/usr/bin/env bash
# Paper 001 (Diva) evaluation on a seeded sample of ASQA dev, passages pooled from the sampled questions' own
# knowledge and qa-pair contexts, embedded model, zero-shot. Runs share the LLM cache (resumable; a repeated run
# makes no new calls):
#   main   - closed-book, query refinement, vanilla RAG, ToC, Diva-RD, Diva (batched verification)
#   oracle - retrieval with the gold disambiguated questions (Table 3), beside vanilla and RD (cached)
#   each   - Diva with one verification call per interpretation (steps 1-4 cached)
#   demos  - vanilla RAG and Diva with 2 nearest-neighbour demonstrations from the rest of ASQA dev
# Usage: benchmarks/run_diva.sh [N_QUESTIONS [RUN ...]]   (default 50, all runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
N="${1:-50}"
shift || true
RUNS=("${@:-main oracle each demos}")
run() {  # NAME METHODS extra flags...
  local name="$1" methods="$2"; shift 2
  resume_run "runs/diva/$name" "docs/results/diva/$name"
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset asqa --methods "$methods" --random "$N" --scope pooled "$@" \
    --out "runs/diva/$name" --json > /dev/null
  keep_run "runs/diva/$name" "docs/results/diva/$name"
}
for name in ${RUNS[*]}; do
  case "$name" in
    main) run main closed-book,query-refinement,vanilla-rag,toc,diva-rd,diva ;;
    oracle) run oracle vanilla-rag,diva-rd,diva-oracle ;;
    each) run each diva --set diva.verification=each ;;
    demos) run demos vanilla-rag,diva --set diva.demos=2 --set diva.demo_pool=../shared/data/asqa/dev.jsonl ;;
  esac
done
args=(--run docs/results/diva/main --out docs/results/diva.md --discussion benchmarks/diva_discussion.md)
[ -f docs/results/diva/oracle/results.json ] && args+=(--also docs/results/diva/oracle)
[ -f docs/results/diva/each/results.json ] && args+=(--each-run docs/results/diva/each)
[ -f docs/results/diva/demos/results.json ] && args+=(--demos-run docs/results/diva/demos)
.venv/bin/python benchmarks/diva_report.py "${args[@]}"
