#!/usr/bin/env bash
# Paper 004 evaluation on RAMDocs dev: six methods, top-5 of each question's own documents, with the
# gold passage ensured, with gold passages excluded, and with the closed-book filter. Resumable (LLM cache).
# Usage: benchmarks/run_post_fusion.sh [N_QUESTIONS]
# Then:  .venv/bin/python benchmarks/post_fusion_report.py --runs docs/results/post_fusion
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
N="${1:-60}"
METHODS="concat,post-fusion,pruning,summary,concat+pf,pf+concat"
run() {  # NAME, extra flags...
  local name="$1"; shift
  resume_run "runs/post_fusion/$name" "docs/results/post_fusion/$name"
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --methods "$METHODS" --limit "$N" --top-k 5 \
    --scope own --set methods.concat_prompt=post_fusion "$@" --out "runs/post_fusion/$name" --json > /dev/null
  keep_run "runs/post_fusion/$name" "docs/results/post_fusion/$name"
  rm -f "docs/results/post_fusion/$name/timing.json"  # the first runs' model time, from before the cache kept it
}
run gold-ensure --gold ensure
run gold-exclude --gold exclude
run gold-ensure-closedbook --gold ensure --closed-book-filter
