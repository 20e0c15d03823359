#!/usr/bin/env bash
# Set everything up, index the bundled sample corpus, and answer a question from it with citations,
# offline, on the embedded model. The default question names two pieces of music that share a title, and the
# sample also holds a document with a wrong composer and unrelated ones: COrg (paper 000) sorts them out and
# answers each with what it is about and its sources. Usage: scripts/demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
QUESTION="${1:-Who is the composer of String Quintet No. 2?}"
.venv/bin/tanglerag index src/tanglerag/sample_data/sample_corpus.jsonl --out .tanglerag/sample-index --bm25
.venv/bin/tanglerag ask "$QUESTION" --index .tanglerag/sample-index --method corg
