"""Evaluation throughput: the runner against a server with a fixed latency, Ray actors, and the embedded model's
parallel slots. Ratios are measured within one run of this script.

  fake  the 20 bundled RAMDocs questions, each asked --copies times under its own id (10: 200 questions), `concat`,
        against a local fake OpenAI-compatible server that answers after 200 ms, the hashing embedder (so the
        runner is measured, not MiniLM), LLM cache off: concurrency 1/4/16/64, each beside a plain asyncio loop
        making the same model calls (alternating, --repeats times, medians), as a share of the limit the
        200 ms calls allow; Ray with 1 and 2 actors (one question at a time per actor) beside the local engine;
        peak RSS of the driver and of each actor.
  real  the first 8 bundled RAMDocs questions on the embedded model (Qwen2.5-Coder-1.5B, 2 threads, cache off,
        top-3, 64 tokens) with llm.parallel = eval.concurrency = 1, 2, 4: questions per minute for `concat` and
        `post-fusion` (all 20 at top-5 take about an hour on this machine: --questions 20).
Prints the numbers and writes the "throughput-fake" / "throughput-real" sections of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/throughput.py fake|real [--concurrency 16 64] [--repeats 5] [--no-ray] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import math
import multiprocessing
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

import openai
from run_io import write_section

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.tables import Table
from tanglerag.testing import HashEmbedder, fake_openai_server

ROOT = Path(__file__).resolve().parents[1]
DELAY_S = 0.2  # the fake server's answer time


def many_questions(copies: int):
    _, examples = load_dataset("ramdocs-sample")
    return [ex.model_copy(update={"id": f"{ex.id}-{i}"}) for i in range(copies) for ex in examples]


def timed_run(settings: Settings, examples, methods, make_runtime=None) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of this process per question (the runner's own cost), with each answer
    checkpointed (appended and fsynced) as ``eval --out`` does."""
    runtime = Runtime(settings, embedder=HashEmbedder()) if make_runtime is None else make_runtime()
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), time.process_time()
        EvalRunner(runtime, make_runtime=make_runtime).run("ramdocs-sample", examples, methods, out=Path(out))
        return time.perf_counter() - start, (time.process_time() - cpu) / len(examples)


class ActorMemory:
    """Samples the resident memory of the Ray actor processes while a run goes: their peak, per process."""

    def __init__(self) -> None:
        self.peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ActorMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            for proc in Path("/proc").iterdir():
                try:
                    if proc.name.isdigit() and b"_Answerer" in (proc / "cmdline").read_bytes():
                        status = (proc / "status").read_text()
                        kib = int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1])
                        self.peak[int(proc.name)] = max(self.peak.get(int(proc.name), 0), kib)
                except (OSError, StopIteration, ValueError):
                    continue


def _serve(delay_s: float, urls: multiprocessing.Queue) -> None:
    with fake_openai_server(lambda body: "3,559 people [1]", delay_s=delay_s) as server:
        urls.put(server["base_url"])
        threading.Event().wait()  # until terminated


@contextlib.contextmanager
def server_process(delay_s: float):
    """The fake server in a process of its own: it must not share the measured runner's interpreter (GIL)."""
    urls: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_serve, args=(delay_s, urls), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=30)
    finally:
        process.terminate()
        process.join()


def limit_seconds(questions: int, in_flight: int, delay_s: float = DELAY_S) -> float:
    """The least a run can take: rounds of ``in_flight`` questions, one model call of ``delay_s`` each."""
    return math.ceil(questions / in_flight) * delay_s


def plain_loop_seconds(base_url: str, examples, in_flight: int) -> tuple[float, float]:
    """The same model calls from a plain asyncio loop on the SDK's async client, nothing else (no retrieval, no
    traces): what a bare client reaches against this server on this machine, in this run."""
    async def run() -> float:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="no-key", max_retries=0)
        slots = asyncio.Semaphore(in_flight)

        async def ask(example) -> None:
            async with slots:
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": example.question}])

        start = time.perf_counter()
        await asyncio.gather(*(ask(ex) for ex in examples))
        seconds = time.perf_counter() - start
        await client.close()
        return seconds

    cpu = time.process_time()
    seconds = asyncio.run(run())
    return seconds, (time.process_time() - cpu) / len(examples)


def fake_part(copies: int, repeats: int, levels: list[int], with_ray: bool) -> str:
    examples = many_questions(copies)
    lines = [(f"Runner against a fake OpenAI-compatible server answering after {DELAY_S * 1000:.0f} ms: {len(examples)} "
              "questions, `concat`, hashing embedder, LLM cache off, each answer checkpointed (appended and fsynced, as "
              "`eval --out` does), the server in a process of its own. Beside each "
              "concurrency, in the same run, a plain asyncio loop making the same model calls on the SDK's async "
              "client and nothing else. *Of the limit*: the least time the calls allow (rounds of as many questions "
              f"as are in flight, {DELAY_S * 1000:.0f} ms each) over the time taken; the median of {repeats} "
              "alternating repeats of the pair, after one unmeasured run of each (what a process pays once: imports, "
              "the SDK's first request). Speed-up is over the runner at "
              "concurrency 1; driver CPU is this process's CPU time per question."), ""]
    table = Table(["engine", "concurrency / actors", "seconds", "questions/s", "of the limit", "speed-up",
                   "driver CPU ms/q"])
    with server_process(DELAY_S) as base_url:
        base = ["llm.backend=openai", f"llm.base_url={base_url}", "llm.cache=false", "llm.max_retries=0",
                "retrieval.top_k=3"]
        seconds, ratios = {}, []
        first = Settings.load(overrides=[*base, f"llm.concurrency={levels[0]}", f"eval.concurrency={levels[0]}"])
        plain_loop_seconds(base_url, examples[:100], levels[0])  # what a process pays once, for either side:
        timed_run(first, examples[:100], ["concat"])  # imports, the SDK's first request, first-use set-up
        for n in levels:
            settings = Settings.load(overrides=[*base, f"llm.concurrency={n}", f"eval.concurrency={n}"])
            plain, runner = [], []
            for _ in range(repeats):
                plain.append(plain_loop_seconds(base_url, examples, n))
                runner.append(timed_run(settings, examples, ["concat"]))
            seconds[n] = median_run(runner)[0]
            ratios.append(f"{n}: **{median_run(plain)[0] / seconds[n]:.2f}x**")
            for engine, (took, cpu) in (("plain asyncio loop", median_run(plain)), ("local", median_run(runner))):
                add_row(table, engine, n, took, cpu, len(examples), limit_seconds(len(examples), n), seconds.get(1))
                print(table.last_line(), flush=True)
        ratio_line = f"The runner's questions/s over the plain loop's, by concurrency: {', '.join(ratios)}."
        if not with_ray:
            return "\n".join([*lines, *table.lines(), "", ratio_line])
        ray_seconds = {}
        with ActorMemory() as memory:
            for actors in (1, 2):
                settings = Settings.load(overrides=[*base, "llm.concurrency=1", "eval.concurrency=1", "eval.engine=ray",
                                                    f"eval.ray_actors={actors}", "eval.ray_batch_size=10"])
                make = functools.partial(Runtime, settings, embedder=HashEmbedder())
                timed_run(settings, examples[:20], ["concat"], make)  # Ray's start-up, not counted below
                ray_seconds[actors], cpu = timed_run(settings, examples, ["concat"], make)
                add_row(table, "ray", f"{actors} actor(s), 1 question at a time each", ray_seconds[actors], cpu,
                        len(examples), limit_seconds(len(examples), actors), seconds[1])
                print(table.last_line(), flush=True)
    overhead_ms = 1000 * (ray_seconds[1] - seconds[1]) / len(examples)
    driver_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    actor_mib = ", ".join(f"{kib / 1024:.0f}" for kib in sorted(memory.peak.values())) or "not seen"
    lines += [*table.lines(), "", ratio_line, "", (f"Ray, 2 actors over 1: **{ray_seconds[1] / ray_seconds[2]:.2f}x**. Ray's cost per question over "
              f"the local engine (1 actor vs concurrency 1): **{overhead_ms:+.1f} ms**. Peak RSS: driver "
              f"{driver_mib:.0f} MiB; actors {actor_mib} MiB (each actor process seen, both runs).")]
    return "\n".join(lines)


def median_run(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The run of median wall time, with its CPU per question."""
    return sorted(runs)[len(runs) // 2]


def add_row(table: Table, engine: str, in_flight: object, seconds: float, cpu: float, questions: int, limit: float,
            base_seconds: float | None) -> None:
    """``base_seconds``: the runner's at concurrency 1, when this run measured it (the speed-up's base)."""
    table.add(engine, in_flight, f"{seconds:.2f}", f"{questions / seconds:.1f}", f"{limit / seconds:.2f}x",
              "-" if base_seconds is None else f"{base_seconds / seconds:.1f}x", f"{1000 * cpu:.1f}")


def real_part(methods: list[str], questions: int) -> str:
    _, examples = load_dataset("ramdocs-sample", limit=questions)
    lines = [(f"Embedded model (Qwen2.5-Coder-1.5B Q4_K_M, 2 threads, LLM cache off, 64 tokens), the first "
              f"{len(examples)} bundled RAMDocs questions, top-3 own passages; `llm.parallel` slots with as many "
              "questions in flight."), ""]
    table = Table(["method", "slots = concurrency", "seconds", "questions/min", "vs 1 slot"])
    for method in methods:
        base = None
        for slots in (1, 2, 4):
            settings = Settings.load(overrides=["llm.cache=false", f"llm.parallel={slots}", "llm.max_tokens=64",
                                                f"eval.concurrency={slots}", "retrieval.top_k=3"])
            seconds, _ = timed_run(settings, examples, [method], functools.partial(Runtime, settings))
            base = base or seconds
            table.add(method, slots, f"{seconds:.0f}", f"{60 * len(examples) / seconds:.2f}", f"{base / seconds:.2f}x")
            print(table.last_line(), flush=True)
    return "\n".join([*lines, *table.lines()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["fake", "real"])
    parser.add_argument("--copies", type=int, default=10, help="fake: times each bundled question is asked")
    parser.add_argument("--repeats", type=int, default=3, help="fake: alternating repeats of each concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64],
                        help="fake: questions in flight, each measured beside the plain loop")
    parser.add_argument("--ray", action=argparse.BooleanOptionalAction, default=True,
                        help="fake: also Ray with 1 and 2 actors (needs concurrency 1 among --concurrency)")
    parser.add_argument("--methods", default="concat,post-fusion", help="real: methods to time")
    parser.add_argument("--questions", type=int, default=8, help="real: the first N bundled questions")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    args = parser.parse_args()
    if args.part == "fake" and args.ray and 1 not in args.concurrency:
        parser.error("--ray compares against the runner at concurrency 1: add 1 to --concurrency, or give --no-ray")
    text = (fake_part(args.copies, args.repeats, args.concurrency, args.ray) if args.part == "fake"
            else real_part(args.methods.split(","), args.questions))
    print(text)
    given = sys.argv[1:]
    shown = " ".join(a for i, a in enumerate(given) if a != "--out" and (i == 0 or given[i - 1] != "--out"))
    write_section(args.out, f"throughput-{args.part}", f"## Evaluation throughput: {args.part} "
                  f"(`benchmarks/throughput.py {shown}`, one run)\n\n{text}")


if __name__ == "__main__":
    main()
