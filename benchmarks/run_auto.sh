#!/usr/bin/env bash
# Issue 29: auto beside every method it routes to, on the mixed dev suite (benchmarks/mixed_suite.py: K questions per
# class and source, each with its own passages, classes from the datasets' labels), embedded model, greedy. One
# eval with a checkpoint after every question and every LLM call cached, so an interrupted run resumes.
# Usage: benchmarks/run_auto.sh [K [--set key=value ...]]   (env HEAD=N answers only the first N questions now, so a
#   long run can be taken in pieces; METHODS overrides the list; RUN names the run, default main: e.g.
#   RUN=probe METHODS=auto benchmarks/run_auto.sh 10 --set auto.routes.clean=probe ...; main was answered under
#   the routes of benchmarks/auto_routes_v1.yaml, so extending it takes -c benchmarks/auto_routes_v1.yaml). Then:
#   .venv/bin/python benchmarks/auto_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
K="${1:-10}"
shift || true
METHODS="${METHODS:-auto,concat,corg,post-fusion,diva}"
METRICS="tangle_score,answer_recall,misinfo_leak,ramdocs_strict,noise_cited,ans,unk,cited"
SUITE="runs/auto/mixed-$K.jsonl"
[[ -f "$SUITE" ]] || HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/mixed_suite.py --per-class "$K" --out "$SUITE"
HEAD="${HEAD:-$(wc -l < "$SUITE")}"
RUN="${RUN:-main}"
resume_run "runs/auto/$RUN" "docs/results/auto/$RUN"
HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset "$SUITE" --methods "$METHODS" --metrics "$METRICS" \
  --head "$HEAD" --top-k 10 --scope own "$@" --out "runs/auto/$RUN" --json > /dev/null
keep_run "runs/auto/$RUN" "docs/results/auto/$RUN"
