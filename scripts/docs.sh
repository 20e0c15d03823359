#!/usr/bin/env bash
# Build the documentation site (mkdocs.yml: the pages under docs/ and the API reference mkdocstrings renders from
# the docstrings and annotations) into DIR, or into a temporary folder that is removed afterwards (the HTML is
# never committed). --strict makes every warning an error: a broken link between pages, a page the nav names that
# does not exist, a cross-reference or docstring that cannot be resolved; so the test command fails on them.
# Usage: scripts/docs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
  OUT="$1"
else
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
fi
# not --quiet: it silences the warnings that --strict counts. Its INFO lines (progress) are left out instead.
.venv/bin/mkdocs build --strict --site-dir "$OUT" 2>&1 | { grep -v '^INFO ' || true; } >&2
if [ $# -gt 0 ]; then echo "Documentation site: $OUT/index.html"; fi
