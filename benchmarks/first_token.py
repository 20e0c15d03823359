"""How soon an answer starts (issue 69): seconds from the question to the passages, to the answer's first token and
to its end, on the bundled sample and the embedded model, with the model cache off so every call is made.

Each method is asked twice on the same question: watched (a tracker that hears events, as ``ask`` on a terminal and
a streamed request are, so the answer's call streams) and not watched (the answer comes whole), so the cost of
streaming is the ratio of the two ends, measured in one run. "Prompt s" is the answer call's prompt read at the
speed llama.cpp reported for that call, the part of the wait before the first token that streaming cannot remove.
Writes the "first-token" section of docs/benchmarks.md.

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
QUESTION = "Who is the composer of String Quintet No. 2?"


def timed(runtime: Runtime, method: str, watched: bool) -> dict[str, float]:
    """Seconds from the ask to the passages, the first token and the answer; the answer call's prompt tokens."""
    start, marks = time.perf_counter(), {}

    def heard(event: ProgressEvent) -> None:
        marks.setdefault(event.type, time.perf_counter() - start)

    tracker = Tracker(on_event=heard) if watched else Tracker()
    answer = runtime.answer(AskRequest(question=Question(text=QUESTION), method=method, tracker=tracker))
    end = time.perf_counter() - start
    last = answer.trace.calls[-1]
    return {"passages": marks.get("passages", float("nan")), "first": marks.get("token", end), "end": end,
            "prompt_tokens": last.prompt_tokens, "calls": len(answer.trace.calls)}


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
        rows = [("| method | watched | passages at | first token at | answer at | prompt tokens (answer call) | "
                "prompt s at the rate | calls |"), "|---|---|---|---|---|---|---|---|"]
        for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
            for watched in (True, False):
                got = timed(runtime, method, watched)
                first = f"{got['first']:.1f} s" if watched else "(whole at the end)"
                rows.append(f"| {method} | {'yes' if watched else 'no'} | {got['passages']:.2f} s | {first} | "
                            f"{got['end']:.1f} s | {got['prompt_tokens']:.0f} | "
                            f"{got['prompt_tokens'] / args.prompt_rate:.1f} | {got['calls']:.0f} |")
                print(rows[-1], file=sys.stderr, flush=True)
    text = "\n".join([(f"## How soon an answer starts (`benchmarks/first_token.py`, embedded 1.5B, 2 threads, one run, "
                      f"{time.strftime('%Y-%m-%d')})"), "",
                      (f"The bundled sample, \"{QUESTION}\", model cache off. Watched: the question is heard as `ask` "
                      "on a terminal and a streamed request hear it, so the passages go out when retrieval ends and "
                      "the answer's call streams; not watched: the answer comes whole. Seconds from the ask."), "",
                      *rows])
    write_section(ROOT / "docs/benchmarks.md", "first-token", text)
    print("wrote the first-token section of docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
