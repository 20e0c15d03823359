"""Concurrent streamed chat requests against `tanglerag serve` in front of a model server of fixed latency.

The service (a subprocess: client and server do not share an interpreter) answers `concat` over the bundled sample
(hashing embedder, so the service is measured, not MiniLM; LLM cache off) with an OpenAI-compatible fake server that
answers every call after 1 s (a process of its own), `llm.concurrency` and `service.max_running` set high enough for
every request. For 1, 16, 64 and 256 requests sent at once to `/v1/chat/completions` with `stream: true`: the wall
time until the last one finished, as a multiple of one request's; requests/s; the p50 / p99 time to the first
streamed event; and the most threads the service process had while answering (read from /proc). Issue 61's goal:
64 within 2x one request's time, 256 within 3x, the thread count not growing with the requests.
Writes the "service-concurrency" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/service_concurrency.py [--levels 1 16 64 256] [--delay 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from run_io import write_section
from service_load import SAMPLE, free_port, start
from throughput import server_process

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "What is the population of Broken Bow?"


def serve(index: Path, port: int, base_url: str, most: int) -> None:
    """The server process: the real service on the hashing embedder, its model the fake server."""
    import uvicorn

    from tanglerag.runtime import Runtime
    from tanglerag.service.app import create_app
    from tanglerag.settings import Settings
    from tanglerag.testing import HashEmbedder

    settings = Settings.load(overrides=["llm.backend=openai", f"llm.base_url={base_url}", "llm.cache=false",
                                        "llm.max_retries=0", f"llm.concurrency={most}", "retrieval.top_k=3",
                                        f"service.max_running={most}", f"service.max_waiting={most}"])
    uvicorn.run(create_app(Runtime(settings, index_dir=index, embedder=HashEmbedder())), host="127.0.0.1",
                port=port, log_level="warning", backlog=4096)


def build_index(folder: Path) -> None:
    from tanglerag.api import Tanglerag
    from tanglerag.testing import HashEmbedder

    Tanglerag(folder, embedder=HashEmbedder()).build(SAMPLE)


def threads_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


async def burst(base: str, n: int) -> dict[str, float]:
    """``n`` streamed chat requests at once: wall time, and each one's time to its first event."""
    firsts: list[float] = []
    statuses: list[int] = []
    body = {"model": "tanglerag/concat", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}

    async def one(client: httpx.AsyncClient) -> None:
        began, first = time.perf_counter(), None
        async with client.stream("POST", "/v1/chat/completions", json=body) as reply:
            statuses.append(reply.status_code)
            async for line in reply.aiter_lines():
                if first is None and line.startswith("data:"):
                    first = time.perf_counter() - began
        firsts.append(first if first is not None else float("inf"))

    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        began = time.perf_counter()
        await asyncio.gather(*(one(client) for _ in range(n)))
        wall = time.perf_counter() - began
    ordered = sorted(firsts)
    return {"wall": wall, "ok": statuses.count(200), "p50_first": ordered[len(ordered) // 2],
            "p99_first": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]}


def measure(base: str, pid: int, n: int) -> dict[str, float]:
    """A burst of ``n``, with the server's threads sampled every 50 ms while it runs."""
    most, done = [threads_of(pid)], threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            most.append(threads_of(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = asyncio.run(burst(base, n))
    finally:
        done.set()
        sampler.join()
    return {**result, "threads": max(most)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--delay", type=float, default=1.0, help="the model server's answer time, seconds")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    parser.add_argument("--serve", nargs=4, metavar=("INDEX", "PORT", "URL", "MOST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), int(args.serve[1]), args.serve[2], int(args.serve[3]))
        return
    table = Table(["requests at once", "ok", "wall s", "x one request", "requests/s", "first event p50 ms",
                   "first event p99 ms", "server threads (most)"])
    with tempfile.TemporaryDirectory() as tmp, server_process(args.delay) as base_url:
        build_index(Path(tmp) / "idx")
        port = free_port()
        proc = start([sys.executable, __file__, "--serve", str(Path(tmp) / "idx"), str(port), base_url,
                      str(max(args.levels))], port)
        try:
            base = f"http://127.0.0.1:{port}"
            measure(base, proc.pid, 1)  # first request: imports and the index load, not counted
            results = {n: measure(base, proc.pid, n) for n in args.levels}
        finally:
            proc.terminate()
            proc.wait()
    one = results[min(results)]["wall"]
    for n, r in results.items():
        table.add(n, r["ok"], f"{r['wall']:.2f}", f"{r['wall'] / one:.2f}x", f"{n / r['wall']:.1f}",
                  f"{1000 * r['p50_first']:.0f}", f"{1000 * r['p99_first']:.0f}", r["threads"])
        print(table.last_line(), flush=True)
    lines = [("`benchmarks/service_concurrency.py`: streamed chat requests sent at once to `tanglerag serve` (`concat`, "
              f"hashing embedder, cache off) in front of a fake OpenAI-compatible server answering after {args.delay:g} s"
              " (processes of their own); *x one request* is the wall time over a single request's in the same run."),
             "", *table.lines()]
    write_section(args.out, "service-concurrency", "\n".join(["### Service: concurrent streamed chat requests", "", *lines]))


if __name__ == "__main__":
    main()
