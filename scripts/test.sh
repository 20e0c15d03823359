#!/usr/bin/env bash
# Set everything up, lint (ruff), and run the whole test suite (unit tests with a canned LLM,
# integration tests with the real embedded model).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/ruff check src tests benchmarks
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest -q
