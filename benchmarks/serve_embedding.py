"""Issue 70: the question's embedding on Ray Serve, each service replica embedding its own against one embedding
deployment that batches the replicas' questions (``service.embedding_replicas``, ``serve.batch``).

Both configurations run 2 service replicas on a local Ray instance on this machine over one index folder of the
bundled sample embedded with the default embedder (MiniLM int8 on onnxruntime, the embedding cache off so that every
question is embedded), calling a fake OpenAI-compatible server in a process of its own that answers after 200 ms.
``--clients`` concurrent chat requests (non-streamed ``/v1/chat/completions``, ``concat``, each question different)
go through Serve's proxy, ``--requests`` in all, after a warm-up: requests/s, p50 and p99, failures, and, for the
deployment, the sizes of the batches it embedded. Every answer is also compared with the one a single in-process
runtime gives over the same folder: the same passages cited in the same words.

Writes the "serve-embedding" section of docs/benchmarks.md.
Run: .venv/bin/python benchmarks/serve_embedding.py [--clients 64] [--requests 400] [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
import ray
from ray import serve
from run_io import write_section
from service_load import chat_load, free_port, tail_ms
from throughput import DELAY_S, server_process

from tanglerag.embeddings import Embedder
from tanglerag.index.passage_index import store_passages
from tanglerag.ingest import read_jsonl_passages
from tanglerag.runtime import AskRequest, Runtime
from tanglerag.service import ray_serve
from tanglerag.service.ray_models import EMBEDDING_DEPLOYMENT
from tanglerag.settings import Settings
from tanglerag.types import Question

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"
TOPICS = ("Brahms's symphonies", "Mozart's operas", "the Berlin Philharmonic", "Beethoven's deafness",
          "Clara Schumann's concerts", "the Vienna premiere")


def question(n: int) -> str:
    """The ``n``-th question: each one different, so none is an embedding already made."""
    return f"What is known about {TOPICS[n % len(TOPICS)]}, item {n}?"


async def load(base: str, clients: int, requests: int, first: int
               ) -> tuple[float, list[float], dict[int, list[str] | None]]:
    """``requests`` chat requests, ``clients`` at a time, questions ``first`` on: seconds, latencies, each answer's
    citations (None for a request that failed)."""
    numbers = range(first, first + requests)
    bodies = [{"model": "tanglerag/concat", "messages": [{"role": "user", "content": question(n)}]} for n in numbers]
    seconds, latencies, replies = await chat_load(base, clients, bodies, timeout=120)
    return seconds, latencies, {n: _citations(reply) for n, reply in zip(numbers, replies, strict=True)}


def _citations(reply: httpx.Response | None) -> list[str] | None:
    """The citations a chat reply's ``tanglerag`` field gives, or None for a failed or unreadable one."""
    try:
        return reply.json()["tanglerag"]["citations"] if reply is not None and reply.status_code == 200 else None
    except (KeyError, ValueError):
        return None


def settings_for(model_url: str, shared: bool) -> Settings:
    return Settings.load(overrides=[
        "llm.backend=openai", f"llm.base_url={model_url}", "llm.cache=false", "llm.concurrency=64",
        "embedding.cache=false", "service.max_running=64", "service.max_waiting=64", "service.replicas=2",
        f"service.embedding_replicas={1 if shared else 0}", f"service.port={free_port()}", "service.index_poll_s=0"])


def measure(index: Path, model_url: str, shared: bool, clients: int, requests: int) -> dict:
    settings = settings_for(model_url, shared)
    base = f"http://127.0.0.1:{settings.service.port}"
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        ray_serve.start(functools.partial(Runtime, settings, index_dir=index), settings.service,
                        shared=ray_serve.Shared.of(settings))
        asyncio.run(load(base, clients, clients, 10_000))  # warm-up: each replica's methods and embedder built
        embedding = serve.get_deployment_handle(EMBEDDING_DEPLOYMENT, app_name=ray_serve.APP_NAME) if shared else None
        before = len(embedding.batch_sizes.remote().result()) if embedding is not None else 0
        seconds, latencies, answers = asyncio.run(load(base, clients, requests, 0))
        batches = embedding.batch_sizes.remote().result()[before:] if embedding is not None else []
    finally:
        serve.shutdown()
        ray.shutdown()
    return {"shared": shared, "seconds": seconds, "per_s": requests / seconds, "requests": requests,
            **tail_ms(latencies), "failed": sum(a is None for a in answers.values()), "answers": answers,
            "batches": batches}


def one_process(index: Path, model_url: str, requests: int) -> dict[int, list[str]]:
    """Each question's citations from one in-process runtime over the same folder: what the replicas must match."""
    runtime = Runtime(settings_for(model_url, False), index_dir=index)

    slots = asyncio.Semaphore(64)

    async def one(n: int) -> list[str]:
        async with slots:
            answer = await runtime.aanswer(AskRequest(question=Question(text=question(n)), method="concat"))
            return answer.citations

    async def all_of() -> list[list[str]]:
        return await asyncio.gather(*(one(n) for n in range(requests)))
    return dict(enumerate(asyncio.run(all_of())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, server_process(DELAY_S) as model_url:
        index = Path(tmp) / "index"
        store_passages(index, list(read_jsonl_passages(SAMPLE)), Embedder(Settings().embedding), Settings().index)
        own, shared = (measure(index, model_url, flag, args.clients, args.requests) for flag in (False, True))
        alone = one_process(index, model_url, args.requests)
    same = {name: sum(row["answers"].get(n) == alone[n] for n in alone) for name, row in (("own", own),
                                                                                            ("shared", shared))}
    print(json.dumps({k: {x: y for x, y in v.items() if x != "answers"} for k, v in (("own", own),
                                                                                   ("shared", shared))}, indent=1))
    sizes = shared["batches"]
    rows = [f"| {'1 embedding replica for both (serve.batch)' if r['shared'] else 'each its own embedder'} | "
            f"{r['requests']} | {r['seconds']:.1f} | {r['per_s']:.1f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | "
            f"{r['failed']} | {same['shared' if r['shared'] else 'own']} of {args.requests} |" for r in (own, shared)]
    text = (f"## The question's embedding on Ray Serve (`benchmarks/serve_embedding.py`, one run)\n\n"
            f"2 service replicas on a local Ray instance on this machine over one index folder of the bundled sample "
            f"(MiniLM int8 on onnxruntime, embedding cache off: every question is embedded), calling a fake "
            f"OpenAI-compatible server in its own process that answers after {DELAY_S * 1000:.0f} ms; "
            f"{args.clients} concurrent clients, each question different, non-streamed chat requests (`concat`) "
            f"through Serve's proxy, after a warm-up. Same answers: the requests whose citations are those one "
            f"in-process runtime gives for the same question.\n\n"
            "| the question's embedding | requests | seconds | requests/s | p50 ms | p99 ms | failed | same answers |\n"
            "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) +
            f"\n\nThe embedding deployment over each replica its own: **{shared['per_s'] / own['per_s']:.2f}x** the "
            f"requests a second; it embedded the {sum(sizes)} questions in {len(sizes)} batches (mean "
            f"{statistics.mean(sizes) if sizes else 0:.1f}, largest {max(sizes, default=0)}).")
    write_section(args.out, "serve-embedding", text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
