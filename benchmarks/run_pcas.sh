#!/usr/bin/env bash
# Paper 002 (PCAS) on OR-ShARC dev: build ORCA-ShARC with the embedded judge (resumable: every judgment is
# cached), then evaluate OR/B1/B2/B3/PCAS with MiniLM and BM25, lambda and beam tuned on dev by the sweep.
# Usage: benchmarks/run_pcas.sh [--set key=value ...]   (options go to the build, e.g. llm.n_threads=1)
# Then:  .venv/bin/python benchmarks/pcas_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCE="${TANGLERAG_DATA_DIR:-../shared/data}/or-sharc"
start=$(date +%s)
HF_HUB_OFFLINE=1 .venv/bin/tanglerag pcas build --source "$SOURCE/dev.jsonl" --out runs/orca-dev "$@"
echo "build seconds: $(( $(date +%s) - start ))"
HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset runs/orca-dev --methods or,b1,b2,b3,pcas --retriever dense,bm25 \
  --corpus "$SOURCE/id2snippet.json" --sweep --out runs/orca-dev-eval --json > /dev/null
mkdir -p docs/results/pcas
cp runs/orca-dev/{manifest.json,orca_sharc.jsonl} runs/orca-dev-eval/results.json docs/results/pcas/
