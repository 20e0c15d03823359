"""Streams that disconnect: does a question whose client left free its model slot within one LLM call?

A server in a subprocess answers with a model that takes a fixed time per call (the canned LLM plus a sleep, so
the numbers measure cancellation, not generation) and one question at a time. All clients stream at once; half of
them close their stream in the middle of their question's second LLM call. For each closed stream the gap to
the next question starting on the freed slot is measured, and /metrics says how many questions and calls were
abandoned. Writes the "service-disconnect" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/service_disconnect.py [--clients 8] [--call-seconds 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from run_io import write_section
from service_load import QUESTIONS, build_index, free_port, start

ROOT = Path(__file__).resolve().parents[1]
METHOD, TOP_K = "post-fusion", 5  # one call per passage: five calls a question, four left when its client leaves


def serve_slow(index: Path, port: int, call_seconds: float) -> None:
    import uvicorn

    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.runtime import Runtime
    from tanglerag.service.app import create_app
    from tanglerag.settings import Settings
    from tanglerag.testing import CannedBackend

    def slow(messages) -> str:
        time.sleep(call_seconds)
        return "The answer [1]"

    settings = Settings.load(overrides=["service.max_waiting=64", "service.max_running=1"])
    runtime = Runtime(settings, index_dir=index, llm=LLM(CannedBackend(responder=slow), CallCache(None)))
    uvicorn.run(create_app(runtime), host="127.0.0.1", port=port, log_level="warning")


async def client(base: str, n: int, leave_after: float | None, nonce: int, log: dict) -> None:
    """One streamed question; with ``leave_after``, close the stream that long after the question started."""
    body = {"question": f"{QUESTIONS[n % len(QUESTIONS)]} ({nonce}-{n})", "method": METHOD, "top_k": TOP_K}
    started = asyncio.Event()

    async def read(reply: httpx.Response) -> None:
        async for line in reply.aiter_lines():
            if line == "event: stage_start" and not started.is_set():
                log["started"][n] = time.monotonic()
                started.set()
            elif line in ("event: answer", "event: error"):
                log["answered" if line == "event: answer" else "failed"][n] = time.monotonic()

    async with httpx.AsyncClient(base_url=base, timeout=600) as http, \
            http.stream("POST", "/v1/ask?stream=true", json=body) as reply:
        reader = asyncio.create_task(read(reply))
        if leave_after is None:
            await reader
            return
        await started.wait()
        await asyncio.sleep(leave_after)
        if not reader.done():
            log["closed"][n] = time.monotonic()
        reader.cancel()  # leaving the block closes the connection mid-stream


async def run(base: str, clients: int, call_seconds: float) -> dict:
    log: dict = {"started": {}, "closed": {}, "answered": {}, "failed": {}}
    began = time.monotonic()
    leave = 1.5 * call_seconds  # in the middle of the question's second call
    await asyncio.gather(*(client(base, n, leave if n % 2 == 0 else None, time.time_ns(), log) for n in range(clients)))
    await asyncio.sleep(0.5)
    gaps = []
    for closed in log["closed"].values():
        later = [t for t in log["started"].values() if t > closed]
        if later:
            gaps.append(min(later) - closed)
    metrics = httpx.get(f"{base}/metrics").text
    count = lambda name: float(re.search(rf"^{name} (\S+)$", metrics, re.MULTILINE).group(1))  # noqa: E731
    return {"clients": clients, "closed": len(log["closed"]), "answered": len(log["answered"]),
            "failed": len(log["failed"]),
            "wall_s": round(time.monotonic() - began, 2), "gaps_s": [round(g, 2) for g in sorted(gaps)],
            "abandoned_questions": count("tanglerag_abandoned_questions_total"),
            "abandoned_calls": count("tanglerag_abandoned_llm_calls_total"),
            "llm_calls": count("tanglerag_llm_calls_total")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--call-seconds", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    parser.add_argument("--serve", nargs=3, metavar=("INDEX", "PORT", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_slow(Path(args.serve[0]), int(args.serve[1]), float(args.serve[2]))
        return
    index = Path(tempfile.mkdtemp(prefix="tanglerag-disconnect-")) / "index"
    build_index(index)
    port = free_port()
    server = start([sys.executable, __file__, "--serve", str(index), str(port), str(args.call_seconds)], port)
    try:
        result = asyncio.run(run(f"http://127.0.0.1:{port}", args.clients, args.call_seconds))
    finally:
        server.terminate()
        server.wait()
    print(result)
    write_section(args.out, "service-disconnect", report(result, args))


def report(r: dict, args: argparse.Namespace) -> str:
    kept = r["clients"] - r["closed"]
    full = r["clients"] * TOP_K * args.call_seconds
    return f"""## Clients that leave mid-stream (`benchmarks/service_disconnect.py`, loopback, one run)

{r['clients']} clients stream `{METHOD}` questions (top_k {TOP_K}: {TOP_K} LLM calls each) at once to a server answering
one question at a time, with a model that takes {args.call_seconds:g} s per call (the canned LLM plus a sleep: this
measures cancellation, not generation). Half of them ({r['closed']}) close their stream {1.5 * args.call_seconds:g} s
after their question started (in the middle of its second call); the other {kept} read to the answer
({r['answered']} answered, {r['failed']} failed).

- Slot freed: the next question started {statistics.median(r['gaps_s']):.2f} s (median; slowest {max(r['gaps_s']):.2f} s)
  after a client left: within the one call in progress ({args.call_seconds:g} s), as designed. Gaps: {r['gaps_s']}.
- Counted: `tanglerag_abandoned_questions` {r['abandoned_questions']:g}, `tanglerag_abandoned_llm_calls`
  {r['abandoned_calls']:g} (the call made before leaving and the one in progress: 2 of {TOP_K} each);
  {r['llm_calls']:g} LLM calls in all, against {r['clients'] * TOP_K} had nobody been cancelled.
- Wall time {r['wall_s']} s, against about {full:g} s had every question run to its end.
"""


if __name__ == "__main__":
    main()
