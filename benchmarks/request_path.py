"""Which of tanglerag's files one chat request runs code in, counted rather than read off the imports.

One streamed `/v1/chat/completions` request (`concat`, the canned LLM, the hashing embedder, an index of the bundled
sample) is sent through the real app in-process while a profiler notes every tanglerag function entered; the files
those functions live in are the request's path. Start-up, the index load and a first request are done before the
counted one. Two counts: every file, and the files of the serving path proper (leaving out the shared model, trace,
text, settings and metadata helpers every path uses). Issue 61's goal: a chat request crosses <= 10 files.
Writes the "request-path" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/request_path.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from fastapi.testclient import TestClient
from run_io import write_section
from service_load import SAMPLE

import tanglerag
from tanglerag.api import Tanglerag
from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(tanglerag.__file__).parent
HELPERS = {"types.py", "trace.py", "tracking.py", "text.py", "config.py", "settings.py", "errors.py", "family.py",
           "where.py", "provenance.py", "conflicts.py", "users.py", "aio.py", "redaction.py", "jsonio.py",
           "registry.py", "tables.py"}
"""Shared models and helpers (data types, the trace, text normalisation, settings, the async bridge): every path
uses them; the serving path is what is left."""
BODY = {"model": "tanglerag/concat", "stream": True,
        "messages": [{"role": "user", "content": "What is the population of Broken Bow?"}]}


class Recorder:
    """A profiler for every thread started after it is installed (the test client's app thread, the loop's worker
    threads), noting the package files whose functions run while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.seen: set[str] = set()
        threading.setprofile(self.note)
        sys.setprofile(self.note)

    def note(self, frame: FrameType, event: str, arg: Any) -> None:
        if self.on and event == "call" and frame.f_code.co_filename.startswith(str(PACKAGE)):
            self.seen.add(str(Path(frame.f_code.co_filename).relative_to(PACKAGE)))


def ask(client: TestClient) -> None:
    with client.stream("POST", "/v1/chat/completions", json=BODY) as reply:
        assert reply.status_code == 200, reply.read()
        for _ in reply.iter_lines():
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    args = parser.parse_args()
    recorder = Recorder()  # before any thread the request will use is started
    with tempfile.TemporaryDirectory() as tmp:
        Tanglerag(Path(tmp) / "idx", embedder=HashEmbedder()).build(SAMPLE)
        runtime = Runtime(Settings.load(overrides=[f"cache_dir={tmp}"]), index_dir=Path(tmp) / "idx",
                          llm=canned_llm(default="3,559 people [1]"), embedder=HashEmbedder())
        with TestClient(create_app(runtime)) as client:
            ask(client)  # the first request loads what is loaded once
            recorder.on = True
            ask(client)
            recorder.on = False
    files = sorted(recorder.seen)
    path = [f for f in files if Path(f).name not in HELPERS]
    text = "\n".join([
        "### Files one chat request crosses", "",
        ("`benchmarks/request_path.py`: the tanglerag files whose functions run while one streamed "
         "`/v1/chat/completions` request (`concat`, canned LLM) is answered, after a first request: "
         f"**{len(files)}** files in all, **{len(path)}** on the serving path once the shared models and helpers "
         f"every path uses are left out ({', '.join(sorted(HELPERS & {Path(f).name for f in files}))})."), "",
        "Serving path: " + ", ".join(f"`{f}`" for f in path) + ".", ""])
    print(text)
    write_section(args.out, "request-path", text)


if __name__ == "__main__":
    main()
