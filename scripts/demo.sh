#!/usr/bin/env bash
# Set everything up, index the bundled sample corpus, and answer a question from it with citations,
# offline, on the embedded model. Usage: scripts/demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
QUESTION="${1:-Who are the directors of the film \"Lahu Ke Do Rang\"?}"
.venv/bin/tanglerag index src/tanglerag/sample_data/sample_corpus.jsonl --out .tanglerag/sample-index --bm25
.venv/bin/tanglerag ask "$QUESTION" --index .tanglerag/sample-index
