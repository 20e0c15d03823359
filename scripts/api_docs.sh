#!/usr/bin/env bash
# Build the Python API reference with pdoc, from the docstrings and annotations of the API, the models it takes
# and returns, and what a plug-in family is written against (Family, Registry, Method, the conflict report), into
# DIR (default: a fresh temporary folder; the HTML is never committed). An annotation or docstring pdoc cannot
# resolve is an error, not a warning, so the test command fails on a broken reference.
# Usage: scripts/api_docs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-$(mktemp -d)}"
.venv/bin/python -W error::UserWarning -m pdoc -o "$OUT" tanglerag.api tanglerag.types tanglerag.trace \
  tanglerag.eval.records tanglerag.index.documents tanglerag.index.manifest tanglerag.index.corpus \
  tanglerag.settings tanglerag.config tanglerag.family tanglerag.registry tanglerag.methods.base tanglerag.conflicts
echo "API reference: $OUT/index.html"
