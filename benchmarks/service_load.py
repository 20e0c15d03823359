"""Loopback load test of `tanglerag serve`: throughput and latency, and what the queue bound does when cold.

Three runs against a server in a subprocess (so client and server do not share an interpreter):
  canned  60 s on the canned LLM (the service's own overhead: HTTP, JSON, retrieval, trace);
  warm    60 s on the real embedded model with every question already in the LLM cache;
  cold    a burst of new questions on the real model: how fast do the ones beyond the bound get 429?
Prints the numbers and writes the "service" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/service_load.py [--seconds 60] [--clients 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from run_io import write_section

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"
QUESTIONS = [json.loads(line)["question"]  # the sample's own questions: retrieval finds real passages
             for line in (ROOT / "src/tanglerag/sample_data/ramdocs_sample.jsonl").read_text().splitlines()[:5]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_canned(index: Path, port: int) -> None:
    """The server process of the canned run: the real service around the canned LLM and the real embedder."""
    import uvicorn

    from tanglerag.runtime import Runtime
    from tanglerag.service.app import create_app
    from tanglerag.settings import Settings
    from tanglerag.testing import canned_llm

    settings = Settings.load(overrides=["service.max_waiting=64"])
    runtime = Runtime(settings, index_dir=index, llm=canned_llm(default="The answer [1]"))
    uvicorn.run(create_app(runtime), host="127.0.0.1", port=port, log_level="warning")


def start(args: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.5)
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode()[-2000:]}")
    proc.kill()
    raise SystemExit("server did not start in 300 s")


async def load(base: str, seconds: float, clients: int, method: str) -> dict:
    """``clients`` workers ask the questions in turn for ``seconds``; latency of every request."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    stop = time.monotonic() + seconds

    async def worker(n: int) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=600) as client:
            i = n
            while time.monotonic() < stop:
                start = time.perf_counter()
                r = await client.post("/v1/ask", json={"question": QUESTIONS[i % len(QUESTIONS)], "method": method})
                latencies.append(time.perf_counter() - start)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                i += 1

    began = time.monotonic()
    await asyncio.gather(*(worker(n) for n in range(clients)))
    wall = time.monotonic() - began
    return summary(latencies, statuses, wall, clients, method)


async def chat_load(base: str, clients: int, bodies: list[dict], timeout: float
                    ) -> tuple[float, list[float], list[httpx.Response | None]]:
    """Each of ``bodies`` posted to ``/v1/chat/completions``, ``clients`` at a time: the seconds for all, each
    request's latency, and each reply in ``bodies``' order (None where the request failed on the way)."""
    latencies: list[float] = []
    replies: list[httpx.Response | None] = [None] * len(bodies)
    slots = asyncio.Semaphore(clients)
    async with httpx.AsyncClient(base_url=base, timeout=timeout,
                                 limits=httpx.Limits(max_connections=clients)) as http:
        async def one(n: int) -> None:
            async with slots:
                start = time.perf_counter()
                with contextlib.suppress(httpx.HTTPError):  # a failed request stays None
                    replies[n] = await http.post("/v1/chat/completions", json=bodies[n])
                latencies.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(len(bodies))))
    return time.perf_counter() - start, latencies, replies


def tail_ms(latencies: list[float]) -> dict[str, float]:
    """The median and the 99th-percentile latency in milliseconds (the Ray Serve benchmarks' ``p50_ms``, ``p99_ms``)."""
    ordered = sorted(latencies)
    return {"p50_ms": statistics.median(ordered) * 1000, "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1000}


def summary(latencies: list[float], statuses: dict[int, int], wall: float, clients: int, method: str) -> dict:
    ordered = sorted(latencies)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return {"method": method, "clients": clients, "requests": len(ordered), "seconds": round(wall, 1),
            "throughput_rps": round(len(ordered) / wall, 2), "p50_ms": round(pick(0.50), 1),
            "p99_ms": round(pick(0.99), 1), "mean_ms": round(statistics.fmean(ordered) * 1000, 1),
            "errors": sum(n for code, n in statuses.items() if code != 200), "statuses": statuses}


async def burst(base: str, n: int, method: str, answered_wait: float) -> dict:
    """``n`` new questions at once: the ones beyond the bound must get 429 fast, not queue."""
    nonce = time.time_ns()
    results: list[tuple[int, float]] = []

    async def one(client: httpx.AsyncClient, i: int) -> None:
        start = time.perf_counter()
        try:
            r = await client.post("/v1/ask", json={"question": f"{QUESTIONS[i % len(QUESTIONS)]} (burst {nonce}-{i})",
                                                   "method": method})
            results.append((r.status_code, time.perf_counter() - start))
        except httpx.HTTPError:
            results.append((0, time.perf_counter() - start))

    limits = httpx.Limits(max_connections=n)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        tasks = [asyncio.create_task(one(client, i)) for i in range(n)]
        await asyncio.wait(tasks, timeout=answered_wait)
        for task in tasks:
            task.cancel()
    rejected = sorted(t for code, t in results if code == 429)
    answered = sorted(t for code, t in results if code == 200)
    return {"sent": n, "rejected_429": len(rejected), "answered_within_wait": len(answered),
            "429_p50_ms": round(rejected[len(rejected) // 2] * 1000, 1) if rejected else None,
            "429_max_ms": round(rejected[-1] * 1000, 1) if rejected else None,
            "first_answer_s": round(answered[0], 1) if answered else None, "waited_s": answered_wait}


def build_index(folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "tanglerag.cli", "index", str(SAMPLE), "--out", str(folder)], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--method", default="concat")
    parser.add_argument("--burst", type=int, default=12)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    parser.add_argument("--note", default="", help="a line on the conditions of the run, added to the report")
    parser.add_argument("--serve-canned", nargs=2, metavar=("INDEX", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_canned:
        serve_canned(Path(args.serve_canned[0]), int(args.serve_canned[1]))
        return
    work = Path(tempfile.mkdtemp(prefix="tanglerag-load-"))
    index = work / "index"
    build_index(index)
    results: dict[str, dict] = {}

    port = free_port()
    server = start([sys.executable, __file__, "--serve-canned", str(index), str(port)], port)
    try:
        results["canned"] = asyncio.run(load(f"http://127.0.0.1:{port}", args.seconds, args.clients, args.method))
    finally:
        server.terminate()
        server.wait()
    print("canned", json.dumps(results["canned"]))

    real = [sys.executable, "-m", "tanglerag.cli", "serve", "--index", str(index)]
    port = free_port()
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    server = start([*real, "--port", str(port), "--set", "service.max_waiting=64"], port, env)
    try:
        base = f"http://127.0.0.1:{port}"
        warm_start = time.monotonic()
        for question in QUESTIONS:  # fill the LLM cache: the warm run measures the service, not generation
            httpx.post(f"{base}/v1/ask", json={"question": question, "method": args.method}, timeout=600).raise_for_status()
        results["warm_up_s"] = {"seconds": round(time.monotonic() - warm_start, 1)}
        results["warm"] = asyncio.run(load(base, args.seconds, args.clients, args.method))
    finally:
        server.terminate()
        server.wait()
    print("warm", json.dumps(results["warm"]))

    port = free_port()
    server = start([*real, "--port", str(port), "--set", "service.max_waiting=2"], port, env)
    try:
        results["cold"] = asyncio.run(burst(f"http://127.0.0.1:{port}", args.burst, args.method, answered_wait=30))
    finally:
        server.kill()
        server.wait()
    print("cold", json.dumps(results["cold"]))
    (ROOT / "docs/results").mkdir(exist_ok=True)
    (ROOT / "docs/results/service_load.json").write_text(json.dumps(results, indent=2) + "\n")
    write_section(args.out, "service", report(results, args))


def report(r: dict, args: argparse.Namespace) -> str:
    c, w, b = r["canned"], r["warm"], r["cold"]
    answered = (f"{b['answered_within_wait']} answered within {b['waited_s']:g} s (first after {b['first_answer_s']} s)"
                if b["answered_within_wait"] else f"none of the admitted ones finished within {b['waited_s']:g} s")
    runs = Table(["run", "requests", "req/s", "p50 ms", "p99 ms", "errors"],
                 [[name, x["requests"], x["throughput_rps"], x["p50_ms"], x["p99_ms"], x["errors"]]
                  for name, x in (("canned LLM", c), ("embedded model, LLM cache warm", w))])
    return f"""## Service under load (`benchmarks/service_load.py`, loopback, one run)

`tanglerag serve` on the bundled sample index, method `{args.method}`, {args.clients} concurrent clients for
{args.seconds:g} s each (client and server on the same 2 cores; the server in its own process; service
defaults: one question answered at a time).

{runs.markdown()}

Filling the cache for the warm run took {r['warm_up_s']['seconds']} s ({len(QUESTIONS)} questions; seconds only if
an earlier run had cached them). The canned run uses the real MiniLM retriever, so both rows measure the
service plus one query embedding; with the cache warm the embedded model adds only its cache lookup. Latency at {args.clients} clients is mostly queueing behind the single answering slot.

Cold cache, real model, `service.max_waiting=2`: {b['sent']} new questions sent at once ->
**{b['rejected_429']} got 429** (p50 {b['429_p50_ms']} ms, slowest {b['429_max_ms']} ms after sending) with
`Retry-After`, instead of piling up behind generation; {answered}.
{args.note}
"""


if __name__ == "__main__":
    main()
