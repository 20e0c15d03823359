#!/usr/bin/env bash
# Paper 003 (CDIT) evaluation on RAMDocs dev pooled into one persistent index: concat without and with CDIT,
# on a fresh copy of the index per configuration (witnesses and separations are written into the index folder),
# then a second pass of plain concat on the trimmed copy. Resumable (LLM cache).
# Usage: benchmarks/run_cdit.sh [N_QUESTIONS]   (then: .venv/bin/python benchmarks/cdit_report.py --runs runs/cdit)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-50}"
ROOT=runs/cdit
mkdir -p "$ROOT"
.venv/bin/python benchmarks/cdit_corpus.py --dataset ramdocs --out "$ROOT/ramdocs_pool.jsonl"
for kind in flat hnsw ivf; do
  [ -f "$ROOT/index-$kind/manifest.json" ] || \
    HF_HUB_OFFLINE=1 .venv/bin/tanglerag index "$ROOT/ramdocs_pool.jsonl" --out "$ROOT/index-$kind" --index-type "$kind"
done
run() {  # NAME INDEX_KIND TOP_K extra flags...   (REPEAT=1: then CDIT again on the same questions, for the determiner)
  local name="$1" kind="$2" k="$3"; shift 3
  if [ ! -d "$ROOT/$name/index" ]; then mkdir -p "$ROOT/$name"; cp -r "$ROOT/index-$kind" "$ROOT/$name/index"; fi
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --sample "$N" --scope pooled --index "$ROOT/$name/index" \
    --top-k "$k" --methods concat,cdit "$@" --out "$ROOT/$name/first" --json > /dev/null
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --sample "$N" --scope pooled --index "$ROOT/$name/index" \
    --top-k "$k" --methods concat "$@" --out "$ROOT/$name/second" --json > /dev/null
  if [ "${REPEAT:-0}" = 1 ]; then
    HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset ramdocs --sample "$N" --scope pooled --index "$ROOT/$name/index" \
      --top-k "$k" --methods cdit "$@" --out "$ROOT/$name/repeat" --json > /dev/null
  fi
}
REPEAT=1 run flat-k10 flat 10
run flat-k5 flat 5
run hnsw-k10 hnsw 10
run ivf-k10 ivf 10
run flat-k10-phi2 flat 10 --set cdit.cmd=phi1+phi2
run flat-k10-spacy flat 10 --set cdit.judge=spacy
run flat-k10-w1 flat 10 --set cdit.witnesses=1
run flat-k10-w3 flat 10 --set cdit.witnesses=3
