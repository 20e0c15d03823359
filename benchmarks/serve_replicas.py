"""Issue 70: the service as Ray Serve replicas (``serve --engine ray``), 1 against 2, and a replica killed under load.

Each configuration runs on a local Ray instance on this machine: the service's replicas over one index folder of the
bundled sample (the hashing embedder, so a replica loads no embedding model), calling a fake OpenAI-compatible
server in a process of its own that answers after 200 ms. A load of ``--clients`` concurrent chat requests
(non-streamed ``/v1/chat/completions``, ``concat``, httpx, no retries) is sent through Serve's proxy for ``--requests``
requests, after a warm-up; requests/s, p50 and p99 per configuration, in one run. Then, with 2 replicas and the same
load, one replica is killed a second in: the requests that failed (no client retries) are counted; and, with 2
replicas following the folder's versions (``service.index_poll_s``), another process saves 3 new versions of the
index during the load: the requests that failed, and which version each replica answers from afterwards.

Writes the "serve-replicas" section of docs/benchmarks.md.
Run: .venv/bin/python benchmarks/serve_replicas.py [--clients 32] [--requests 400] [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import ray
from ray import serve
from run_io import write_section
from service_load import chat_load, free_port, tail_ms
from throughput import DELAY_S, server_process

from tanglerag.index.passage_index import read_manifest, store_passages
from tanglerag.ingest import read_jsonl_passages
from tanglerag.runtime import Runtime
from tanglerag.service import ray_serve
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"
QUESTION = {"model": "tanglerag/concat", "messages": [{"role": "user", "content": "When did Brahms write his symphonies?"}]}


async def load(base: str, clients: int, requests: int) -> tuple[float, list[float], int]:
    """``requests`` chat requests, ``clients`` at a time: the seconds, each request's latency, and how many failed."""
    seconds, latencies, replies = await chat_load(base, clients, [QUESTION] * requests, timeout=60)
    return seconds, latencies, sum(r is None or r.status_code != 200 for r in replies)


def _replicas() -> list[str]:
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
            if a["name"].startswith(f"SERVE_REPLICA::{ray_serve.APP_NAME}")]


def _new_versions(index: Path, count: int, every_s: float) -> None:
    """Another process's ``tanglerag index --add``: ``count`` new versions of the served folder, ``every_s`` apart."""
    for n in range(count):
        time.sleep(every_s)
        store_passages(index, [Passage(id=f"swap-{n}", text=f"Notice {n}: the hall opens at {n + 8} o'clock.")],
                       HashEmbedder(), Settings().index)


def _serving(base: str, asks: int) -> set[str]:
    """The index versions the replicas say answer (``GET /v1/index``), over ``asks`` requests spread by the proxy."""
    with httpx.Client(base_url=base, timeout=30) as http:
        return {str(http.get("/v1/index").json().get("serving")) for _ in range(asks)}


def measure(index: Path, model_url: str, replicas: int, clients: int, requests: int, kill: bool,
            swap: bool = False) -> dict:
    settings = Settings.load(overrides=[
        "llm.backend=openai", f"llm.base_url={model_url}", "llm.cache=false", "llm.concurrency=64",
        "service.max_running=64", "service.max_waiting=64", f"service.replicas={replicas}",
        f"service.port={free_port()}", f"service.index_poll_s={0.5 if swap else 0}"])
    base = f"http://127.0.0.1:{settings.service.port}"
    ray.init(num_cpus=replicas + 1, include_dashboard=False, log_to_driver=False)
    try:
        ray_serve.start(functools.partial(Runtime, settings, index_dir=index, embedder=HashEmbedder()),
                        settings.service)
        asyncio.run(load(base, clients, clients * 2))  # warm-up: each replica's first requests build its methods
        killer = threading.Timer(1.0, lambda: ray.kill(ray.get_actor(_replicas()[0], namespace="serve"),
                                                       no_restart=True)) if kill else None
        if killer is not None:
            killer.start()
        writer = threading.Thread(target=_new_versions, args=(index, 3, 1.0)) if swap else None
        if writer is not None:
            writer.start()
        seconds, latencies, failed = asyncio.run(load(base, clients, requests))
        if writer is not None:
            writer.join()
            time.sleep(2.0)  # a poll and a load: every replica on the last version
            serving = _serving(base, 20)
    finally:
        serve.shutdown()
        ray.shutdown()
    return {"replicas": replicas, "killed": kill, "swapped": swap, "seconds": seconds, "per_s": requests / seconds,
            **tail_ms(latencies), "failed": failed, "requests": requests,
            **({"serving_after": sorted(serving), "latest": read_manifest(index).data} if swap else {})}


def _during(row: dict) -> str:
    return "a replica killed after 1 s" if row["killed"] else "3 index versions saved" if row["swapped"] else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, server_process(DELAY_S) as model_url:
        index = Path(tmp) / "index"
        store_passages(index, list(read_jsonl_passages(SAMPLE)), HashEmbedder(), Settings().index)
        rows = [measure(index, model_url, n, args.clients, args.requests, kill, swap) for n, kill, swap in
                ((1, False, False), (2, False, False), (2, True, False), (2, False, True))]
    print(json.dumps(rows, indent=1))
    one, two, killed, swapped = rows
    table = ["| replicas | during the load | requests | seconds | requests/s | p50 ms | p99 ms | failed |",
             "|---|---|---|---|---|---|---|---|"]
    table += [f"| {r['replicas']} | {_during(r)} | {r['requests']} | {r['seconds']:.1f} | "
              f"{r['per_s']:.1f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['failed']} |" for r in rows]
    on_latest = swapped["serving_after"] == [swapped["latest"]]
    text = (f"## Serving on Ray Serve replicas (`benchmarks/serve_replicas.py`, one run)\n\n"
            f"The service as Ray Serve replicas on a local Ray instance on this machine, over one index folder (the "
            f"bundled sample, hashing embedder), calling a fake OpenAI-compatible server in its own process that "
            f"answers after {DELAY_S * 1000:.0f} ms; {args.clients} concurrent clients sending non-streamed chat "
            f"requests (`concat`) through Serve's proxy, no retries, after a warm-up.\n\n" + "\n".join(table) +
            f"\n\n2 replicas over 1: **{two['per_s'] / one['per_s']:.2f}x** the requests a second (p50 "
            f"{one['p50_ms']:.0f} -> {two['p50_ms']:.0f} ms). With one of the 2 killed a second into the load: "
            f"{killed['failed']} of {killed['requests']} requests failed (no client retries). With 3 new versions "
            f"of the index saved a second apart by another process during the load (`service.index_poll_s=0.5`): "
            f"{swapped['failed']} of {swapped['requests']} requests failed, and 2 s after the last save "
            f"{'every replica answered from it' if on_latest else 'the replicas answered from ' + ', '.join(swapped['serving_after'])} "
            f"(20 `GET /v1/index` through the proxy).")
    write_section(args.out, "serve-replicas", text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
