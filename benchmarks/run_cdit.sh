#!/usr/bin/env bash
# Paper 003 (CDIT) evaluation on RAMDocs dev pooled into one persistent index: concat without and with CDIT,
# on a fresh copy of the index per configuration (witnesses and separations are written into the index folder),
# then a second pass of plain concat on the trimmed copy; conflictQA on a flat index at the end. Resumable (LLM cache).
# Usage: benchmarks/run_cdit.sh [N_QUESTIONS]   (then: .venv/bin/python benchmarks/cdit_report.py --runs runs/cdit)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-50}"
ROOT=runs/cdit
mkdir -p "$ROOT"
index_all() {  # DATASET KINDS...: the dataset's pooled passages, one pristine index per kind
  local dataset="$1"; shift
  [ -f "$ROOT/${dataset}_pool.jsonl" ] || \
    .venv/bin/python benchmarks/cdit_corpus.py --dataset "$dataset" --out "$ROOT/${dataset}_pool.jsonl"
  for kind in "$@"; do
    [ -f "$ROOT/index-$dataset-$kind/manifest.json" ] || HF_HUB_OFFLINE=1 .venv/bin/tanglerag index \
      "$ROOT/${dataset}_pool.jsonl" --out "$ROOT/index-$dataset-$kind" --index-type "$kind"
  done
}
eval_on() {  # NAME TOP_K OUT METHODS extra flags...
  local name="$1" k="$2" out="$3" methods="$4"; shift 4
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset "$DATASET" --sample "$N" --scope pooled \
    --index "$ROOT/$name/index" --top-k "$k" --methods "$methods" --metrics accuracy,em,f1,unk,cited "$@" \
    --out "$ROOT/$name/$out" --json > /dev/null
}
run() {  # NAME INDEX_KIND TOP_K extra flags...   (REPEAT=1: then CDIT again on the same questions, for the determiner)
  local name="$1" kind="$2" k="$3"; shift 3
  if [ ! -d "$ROOT/$name/index" ]; then mkdir -p "$ROOT/$name"; cp -r "$ROOT/index-$DATASET-$kind" "$ROOT/$name/index"; fi
  eval_on "$name" "$k" first concat,cdit "$@"
  eval_on "$name" "$k" second concat "$@"
  if [ "${REPEAT:-0}" = 1 ]; then eval_on "$name" "$k" repeat cdit "$@"; fi
}
# RAMDocs dev pooled: its misinformation and noise documents are what the judge should discard
DATASET=ramdocs
index_all ramdocs flat hnsw ivf
# the first run's judge and answer calls are cached for the next five (same questions, mostly the same passages)
REPEAT=1 run flat-k10 flat 10
run flat-k10-w1 flat 10 --set cdit.witnesses=1
run flat-k10-w3 flat 10 --set cdit.witnesses=3
run hnsw-k10 hnsw 10
run ivf-k10 ivf 10
run flat-k5 flat 5
run flat-k10-spacy flat 10 --set cdit.judge=spacy
run flat-k10-phi2 flat 10 --set cdit.cmd=phi1+phi2
run flat-k20-batched flat 20 --set cdit.batched=true
# conflictQA (StrategyQA half): each question's memory and counter-memory evidence, pooled
DATASET=conflictqa
index_all conflictqa flat
run conflictqa-flat-k5 flat 5
