"""How soon an answer starts (issue 69): seconds from the question to the passages, to the answer's first token and
to its end, on the bundled sample and the embedded model, with the model cache off so every call is made.

Each method gets a question of its own that this process has not asked before: llama.cpp keeps earlier prompts in
its prompt cache, so a question asked twice would skip its prompt the second time. The question is watched, as
``ask`` on a terminal and a streamed request are, so the passages go out when retrieval ends and the answer's call
streams. "Prompt s" is the answer call's prompt at MODELS.md's rate (72 tokens/s), the wait before its first token
that streaming cannot remove; the goal is a first token within 1 s of the passages plus the prompt time of the calls
before it. What streaming itself costs is measured at the backend: ``generate`` and ``stream`` on the same kind of
JSON request, each on prompts not seen before, alternating. Writes the "first-token" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/first_token.py [--methods concat,corg]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from run_io import write_section

from tanglerag.api import Tanglerag
from tanglerag.runtime import AskRequest, Runtime
from tanglerag.settings import Settings
from tanglerag.tracking import ProgressEvent, Tracker
from tanglerag.types import Question

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"
QUESTIONS = {"concat": "Who is the composer of String Quintet No. 2?",
             "corg": "Who composed the String Quintet No. 2, and in which key is it?"}


def timed(runtime: Runtime, method: str) -> dict[str, float]:
    """Seconds from the ask to the passages, the first token and the answer; the answer call's prompt tokens."""
    start, marks = time.perf_counter(), {}

    def heard(event: ProgressEvent) -> None:
        marks.setdefault(event.type, time.perf_counter() - start)

    question = Question(text=QUESTIONS.get(method, f"Who wrote String Quintet No. 2? ({method})"))
    answer = runtime.answer(AskRequest(question=question, method=method, tracker=Tracker(on_event=heard)))
    end = time.perf_counter() - start
    last = answer.trace.calls[-1]
    return {"passages": marks.get("passages", float("nan")), "first": marks.get("token", end), "end": end,
            "prompt_tokens": last.prompt_tokens, "calls": len(answer.trace.calls)}


def streaming_cost(runtime: Runtime, pairs: int = 3) -> list[str]:
    """Seconds of ``generate`` and of ``stream`` for the same kind of JSON request, on distinct prompts, alternating."""
    from tanglerag.llm.base import GenerationParams
    from tanglerag.llm.structured import schema_of
    from tanglerag.stages.generate import CitedAnswer
    from tanglerag.trace import Message

    backend = runtime.llm.backend
    params = GenerationParams(max_tokens=40, json_schema=schema_of(CitedAnswer))
    spent = {"generate": 0.0, "stream": 0.0}
    for n in range(pairs):
        for way in ("generate", "stream"):
            prompt = [Message(role="user", content=f"In one JSON answer: who wrote string quintet number {n} "
                                                   f"({way})? Name a composer and cite passage [1].")]
            start = time.perf_counter()
            if way == "generate":
                backend.generate(prompt, params)
            else:
                backend.stream(prompt, params, lambda text: None)
            spent[way] += time.perf_counter() - start
    return [(f"Streaming's own cost at the backend: {pairs} JSON requests each way, {spent['generate']:.1f} s by "
            f"`generate`, {spent['stream']:.1f} s by `stream` (ratio {spent['stream'] / spent['generate']:.2f}).")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="concat,corg")
    parser.add_argument("--prompt-rate", type=float, default=72.0, help="prompt tokens a second (MODELS.md)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(overrides=["llm.cache=false", f"cache_dir={Path.home() / '.cache/tanglerag'}"])
        Tanglerag(Path(tmp) / "idx", settings).build(str(SAMPLE))
        runtime = Runtime(settings, index_dir=Path(tmp) / "idx")
        runtime.answer(AskRequest(question=Question(text="warm up"), method="concat"))  # model and index loaded
        rows = [("| method | passages at | first token at | answer at | prompt tokens (answer call) | "
                "prompt s at the rate | calls |"), "|---|---|---|---|---|---|---|"]
        for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
            got = timed(runtime, method)
            rows.append(f"| {method} | {got['passages']:.2f} s | {got['first']:.1f} s | {got['end']:.1f} s | "
                        f"{got['prompt_tokens']:.0f} | {got['prompt_tokens'] / args.prompt_rate:.1f} | "
                        f"{got['calls']:.0f} |")
            print(rows[-1], file=sys.stderr, flush=True)
        cost = streaming_cost(runtime)
    title = (f"## How soon an answer starts (`benchmarks/first_token.py`, embedded 1.5B, 2 threads, one run, "
             f"{time.strftime('%Y-%m-%d')})")
    about = ("The bundled sample, model cache off, a question per method not asked before in the process, watched "
             "as `ask` on a terminal watches it. Seconds from the ask.")
    text = "\n".join([title, "", about, "", *rows, "", *cost])
    write_section(ROOT / "docs/benchmarks.md", "first-token", text)
    print("wrote the first-token section of docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
