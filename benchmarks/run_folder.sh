# Sourced by the run_*.sh scripts: an eval's folder under runs/ outlives the machine it ran on. keep_run copies the
# report files and the checkpoint (checkpoint.jsonl, run.json) into docs/results; resume_run puts a committed
# checkpoint back under runs/ when a fresh checkout has none, so a run taken in pieces over several sessions goes on
# where the last piece stopped instead of starting over (the LLM cache does not travel).
resume_run() {  # RUN_DIR DOCS_DIR
  local run="$1" docs="$2"
  if [[ ! -f "$run/checkpoint.jsonl" && -f "$docs/checkpoint.jsonl" && -f "$docs/run.json" ]]; then
    mkdir -p "$run"
    cp "$docs"/{checkpoint.jsonl,run.json} "$run/"
  fi
}
keep_run() {  # RUN_DIR DOCS_DIR
  local run="$1" docs="$2"
  mkdir -p "$docs"
  cp "$run"/{results.json,results.md,predictions.jsonl,checkpoint.jsonl,run.json} "$docs/"
}
