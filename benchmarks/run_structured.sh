#!/usr/bin/env bash
# Issue 31: text prompts against structured outputs (llm.structured), same questions, same embedded model, greedy.
# Each run is an `eval` with a checkpoint and every LLM call cached, so an interrupted run resumes where it stopped.
# A repair run makes every call of the off run plus the repairs, so off runs after it from the cache.
#   corg-MODE  COrg, pairwise graph, RAMDocs dev, the first CORG_N (100: all) of run_peers.sh's seeded sample of 100
#              (same settings, so the off run reads the peers run's cached calls). The sample keeps dev's order, 36
#              one-answer questions then 64 two-answer ones, so a smaller CORG_N is mostly one-answer questions
#   diva-MODE  Diva, ASQA dev, a seeded sample of DIVA_N (30) questions (settings of run_diva.sh, main run)
#   pf-MODE    post-fusion, Concat+PF and PF+Concat, RAMDocs dev, the first PF_N (60) questions (run_post_fusion.sh,
#              gold ensure)
#   cdit-MODE  CDIT's LLM judge (phi1, one call per document) against RAMDocs' document labels, a seeded sample of
#              CDIT_N (30) questions (benchmarks/cdit_judge_probe.py; its calls are cached, so a re-run is quick)
# Runs on each question's own passages grow: a larger CORG_N or PF_N answers only the questions added. Diva's
# passages are pooled, so another DIVA_N is another run: its stored folders are refused until removed.
# MODE is off, on or repair (text first; JSON only for a reply the parser cannot read in full), default (the shipped
# llm.structured and llm.structured_stages), or a stage's name: that stage on, every other stage off
# (llm.structured_stages), e.g. pf-distill, corg-generate, diva-verify.
# Usage: benchmarks/run_structured.sh [RUN ...]   (default: all, cheapest first); then
#   .venv/bin/python benchmarks/structured_report.py
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/run_folder.sh
CORG_N="${CORG_N:-100}" DIVA_N="${DIVA_N:-30}" PF_N="${PF_N:-60}" CDIT_N="${CDIT_N:-30}"
RUNS=("${@:-corg-repair corg-off corg-on diva-repair diva-off diva-on pf-off pf-on cdit-off cdit-on}")
eval_run() {  # NAME MODE DATASET METHODS extra flags...
  local name="$1" mode="$2" dataset="$3" methods="$4"; shift 4
  local modes=(--set "llm.structured=$mode" --set "llm.structured_stages={}")  # this mode for every stage
  case "$mode" in off|on|repair) ;; default) modes=() ;; *) modes=(--set llm.structured=off --set "llm.structured_stages.$mode=on") ;; esac
  resume_run "runs/structured/$name" "docs/results/structured/$name"
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset "$dataset" --methods "$methods" "$@" \
    "${modes[@]}" --out "runs/structured/$name" --json > /dev/null
  keep_run "runs/structured/$name" "docs/results/structured/$name"
}
for name in ${RUNS[*]}; do
  mode="${name#*-}"
  case "$name" in
    corg-*) eval_run "$name" "$mode" ramdocs corg --random 100 --head "$CORG_N" --top-k 10 --scope own --set corg.graph=pairwise ;;
    diva-*) eval_run "$name" "$mode" asqa diva --random "$DIVA_N" --scope pooled ;;
    pf-*) eval_run "$name" "$mode" ramdocs post-fusion,concat+pf,pf+concat --limit "$PF_N" --top-k 5 --scope own \
            --set methods.concat_prompt=post_fusion --gold ensure ;;
    cdit-*) mkdir -p docs/results/structured
            HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/cdit_judge_probe.py --llm --cmd phi1 --random "$CDIT_N" \
              --set "llm.structured=$mode" --out "docs/results/structured/cdit-judge-$mode.md" > /dev/null ;;
    *) echo "unknown run: $name" >&2; exit 2 ;;
  esac
done
