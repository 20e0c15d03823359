#!/usr/bin/env bash
# Set everything up (chromium too, for the browser tests), lint (ruff), type-check (mypy), and run the whole test suite (unit tests with a canned LLM,
# integration tests with the real embedded model).
set -euo pipefail
cd "$(dirname "$0")/.."
# st: the sentence-transformers embedder and the HF reader are tested too
EXTRAS=test,ray,st scripts/setup.sh
# Python keeps the bytecode it compiles (where PYTHONDONTWRITEBYTECODE is set, as on the machines this was measured
# on, each of the hundreds of test processes would compile every module it reads again: pytest took 77 s longer).
# Compiling on first import compiles only the modules the tests read; compiling the whole venv beforehand (27,620
# modules, ~35 s) took the test command from a fresh clone to 390 s, against 369 s this way (one run each).
unset PYTHONDONTWRITEBYTECODE
# the web inspector's browser tests drive Debian's chromium (Playwright cannot download a browser offline)
if ! command -v chromium >/dev/null; then
  { apt-get install -y --no-install-recommends chromium || { apt-get update -qq && apt-get install -y --no-install-recommends chromium; }; } \
    >/dev/null 2>&1 || echo "chromium could not be installed: the browser tests will skip" >&2
fi
.venv/bin/ruff check src tests benchmarks examples
.venv/bin/mypy src/tanglerag  # --strict, by pyproject.toml (where it says why mypy)
scripts/docs.sh >/dev/null  # the documentation site and its API reference build with --strict: no broken link or docstring
# tests run in parallel (pytest-xdist): one worker per core, at most 4 (the tests that load torch share a worker); the
# real-model tests share one worker (xdist_group), so the model is loaded once. The 20 slowest are printed.
# Plugins are named rather than found by entry point: pytest rewrites the asserts of every module in an entry-point
# plugin's distribution (all of hypothesis and schemathesis: 450 modules compiled per worker instead of 92, ~4 s of
# each worker's start-up here, where PYTHONDONTWRITEBYTECODE keeps no compiled copy).
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest -q \
  -p xdist.plugin -p schemathesis.pytest.plugin -p _hypothesis_pytestplugin \
  -n auto --maxprocesses 4 --dist loadgroup --durations=20
