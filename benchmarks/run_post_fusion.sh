#!/usr/bin/env bash
# Paper 004 evaluation on RAMDocs dev: six methods, top-5 of each question's own documents,
# with the gold passage ensured and with gold passages excluded. Resumable (LLM cache).
# Usage: benchmarks/run_post_fusion.sh [N_QUESTIONS]   then: .venv/bin/python benchmarks/post_fusion_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-60}"
METHODS="concat,post-fusion,pruning,summary,concat+pf,pf+concat"
for SETTING in ensure exclude; do
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --methods "$METHODS" --limit "$N" --top-k 5 \
    --scope own --gold "$SETTING" --out "runs/post_fusion/gold-$SETTING" --json > /dev/null
done
