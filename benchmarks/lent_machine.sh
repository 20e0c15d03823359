#!/bin/bash
# Issue 53's checks on a lent machine with more cores (the workplace's `device` tool: Python 3.12 with torch, no
# network, at most 64 MiB of working tree a call). Two halves:
#
#   benchmarks/lent_machine.sh pack   here: the wheels that machine lacks into .dev/ (ignored through
#                                     .git/info/exclude), Ray and faiss repacked with xz (Ray's wheel alone is 79 MB;
#                                     without its Java jars and RLlib, xz-packed, 31 MB)
#   benchmarks/lent_machine.sh run    there, as the device call's command with carry [".dev"]: installs them, then the
#                                     driver against the 200 ms fake server at 16 and 64 in flight and Ray ingest of
#                                     1M hashing passages with 1 and 2 workers; the numbers land in $OUT
#
# docs/results (115 MiB of stored runs) is more than a call may carry: move it out of the checkout for the call and
# back after it (session 26 did). Python 3.12 there, so tanglerag is installed with --ignore-requires-python.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS="pydantic==2.14.3 pydantic_core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5 rapidfuzz==3.14.6
cachetools==8.0.1 jiter==0.19.0 openai==3.54.0 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 anyio==4.16.0
h11==0.16.0 idna==3.20 distro==1.9.0 sniffio==1.3.1 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
referencing==0.37.0 rpds-py==2026.9.1 typer==0.29.2 shellingham==1.5.4"

download() {  # wheels for CPython 3.12 on x86-64 Linux
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$@"
}

pack() {
  mkdir -p .dev/whl .dev/unpack
  # shellcheck disable=SC2086
  download .dev/whl $WHEELS
  download .dev/unpack ray==2.60.0 faiss-cpu==1.15.1
  for name in ray faiss; do
    rm -rf .dev/unpack/"$name" && mkdir .dev/unpack/"$name"
    unzip -q .dev/unpack/"${name/faiss/faiss_cpu}"-*.whl -d .dev/unpack/"$name"
  done
  rm -rf .dev/unpack/ray/ray/jars .dev/unpack/ray/ray/rllib
  for name in ray faiss; do tar -cJf .dev/"$name".tar.xz -C .dev/unpack/"$name" .; done
  rm -rf .dev/unpack
  du -sh .dev
}

run() {
  export PYTHONUNBUFFERED=1
  nproc; python3 --version
  rm -rf /tmp/site && mkdir -p /tmp/site
  tar -xJf .dev/ray.tar.xz -C /tmp/site && tar -xJf .dev/faiss.tar.xz -C /tmp/site
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .dev/whl/*.whl
  # the entry points that register the method families; the source itself comes first on the path
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --ignore-requires-python --target /tmp/tg .
  export PYTHONPATH=/tmp/site:$PWD/src:/tmp/tg:$PWD/benchmarks
  timeout 150 python3 benchmarks/throughput.py fake --concurrency 16 64 --repeats 5 --no-ray --out "$OUT/throughput.md"
  timeout 330 python3 benchmarks/ray_ingest.py --hash 1000000 --minilm 0 --write "$OUT/ray_ingest.md"
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  *) echo "usage: benchmarks/lent_machine.sh pack|run" >&2; exit 2 ;;
esac
