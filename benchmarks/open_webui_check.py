"""Open WebUI against `tanglerag serve`, in a real browser: does its chat answer with its default settings?

What it shows: Open WebUI (its defaults: native function calling, so its built-in tools ride in every request's
``tools``; title, tags and follow-up tasks on) lists the methods as models and answers a question typed in its chat
with ``tanglerag/corg``; the method's progress as its collapsible thinking block; the answer and its "Sources:"
lines; the chat title from the background task. It also counts the requests that offered tools, from serve's log
(``service/compat.py`` logs the tools it did not use at debug), so the screenshot is known to come from a request
that carried them. ``--legacy`` starts Open WebUI with Function Calling set to Legacy instead (no ``tools``), the
setting tanglerag needed before it answered tools it does not call.

No model runs: the LLM is ``tanglerag.testing.fake_openai_server`` answering COrg's prompts about String Quintet
No. 2 from the contexts they hold, as a small model would (``reply`` below), so the answer's wording is the fake's.
Retrieval is real: the bundled sample corpus indexed with the embedded model (built under ``--work`` on the first
run, or ``--index``). Background tasks are answered with ``service.background_tasks=plain`` (no model call).
Everything stays on 127.0.0.1 and Open WebUI runs offline with auth off, on a fresh data folder each run (its
settings persist in that folder, so a reused one could carry an earlier run's Function Calling).

Install Open WebUI in its own venv (it pins its own torch, fastapi, ...; ~8 min, a few GB)::

    python3.11 -m venv /tmp/owui && /tmp/owui/bin/pip install open-webui==0.12.4

Playwright comes with the test extra; it drives Debian's chromium (``apt-get install chromium``) by default, or
Playwright's own (``--chromium ''`` after ``playwright install chromium``). Then::

    nice -n 19 .venv/bin/python benchmarks/open_webui_check.py /tmp/owui [--out docs/img/open-webui.png]

Writes ``<work>/shot-1-working.png`` (just after sending), ``shot-2-answer.png``, ``shot-3-thinking.png`` (the
thinking block opened, down to the answer's footer; copied to ``--out`` when given) and the servers' logs, and
prints what the chat shows. Exits 1 when no answer appears (``shot-9-failed.png`` then shows what did).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from tanglerag.testing import fake_openai_server

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"
QUESTION = "Who is the composer of String Quintet No. 2?"
OFFERED = re.compile(r"(\d+) tool\(s\) offered, not used \(no method calls tools\): (.*)")


# --- the fake LLM: COrg's prompts answered from the contexts they hold -------------------------------------------

def about(text: str) -> tuple[str, str] | None:
    """(composer, which work) a context states about a String Quintet, or None."""
    if "Quintet" not in text:
        return None
    if "Mozart" in text:
        return "Wolfgang Amadeus Mozart", "String Quintet No. 2 in C minor, K. 406 (Mozart)"
    if "Beethoven" in text:
        return "Ludwig van Beethoven", "none"
    if "Brahms" in text:
        return "Johannes Brahms", "String Quintet No. 2 in G major, Op. 111 (Brahms)"
    return None


def relation(a: tuple[str, str] | None, b: tuple[str, str] | None) -> str:
    """COrg's relation between two contexts, from what each states."""
    if a is None or b is None:
        return "none"
    if "none" in (a[1], b[1]):
        return "ambiguous" if a[0] == b[0] else "none"
    if a[1] != b[1]:
        return "distracting"
    return "duplicated" if a[0] == b[0] else "counterfactual"


def reply(body: dict[str, Any]) -> str:
    """What a small model would say to each of COrg's prompts (the prompt's last line says which it is)."""
    messages = body["messages"]
    last = messages[-1]["content"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if system.startswith("Rewrite the question in plural"):
        return "Who are the composers of String Quintet No. 2?"
    if system.startswith("You read one context"):
        found = about(last)
        return (f"Entity: String Quintet No. 2\nDescriptor: {found[1] if found else 'none'}\n"
                f"Answer: {found[0] if found else 'unknown'}")
    ctx = {int(n): t for n, t in re.findall(r"^\[(\d+)\] (.*)$", last, re.MULTILINE)}
    task = last.rsplit("\n\n", 1)[-1]
    if "Give the relation from context" in task:
        focal = int(re.findall(r"from context \[(\d+)\]", task)[0])
        asked = [int(n) for n in re.findall(r"\[(\d+)\]", task.split("each of the contexts", 1)[1].split(":")[0])]
        return "\n".join(f"[{o}] - {relation(about(ctx.get(focal, '')), about(ctx.get(o, '')))}" for o in asked)
    if "Rank the contexts" in task:
        return ", ".join(str(n) for n in sorted(ctx, key=lambda n: about(ctx[n]) is None))
    if "Summarize" in task:
        return "Two works are called String Quintet No. 2: Brahms's in G major [1] and Mozart's in C minor [2]."
    found = [(n, f) for n, text in ctx.items() if (f := about(text))]
    if "Reply with JSON" in task:
        return json.dumps({"answers": [{"answer": f[0], "about": "" if f[1] == "none" else f[1], "contexts": [n]}
                                       for n, f in found] or [{"answer": "unknown", "about": "none", "contexts": []}]})
    return "\n".join(f"{f[0]} | {f[1]} | [{n}]" for n, f in found) or "unknown"


# --- the servers ---------------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def started(args: list[str], log: Path, ready_url: str, env: dict[str, str], wait_s: float) -> Iterator[None]:
    """A server at nice 19 (the machine may be busy), its output in ``log``, until ``ready_url`` answers 200; stopped
    (by its own pid) on leaving."""
    with log.open("w") as out:
        proc = subprocess.Popen(["nice", "-n", "19", *args], env={**os.environ, **env}, stdout=out,
                                stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        deadline = time.monotonic() + wait_s
        while not _answers(ready_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"{args[0]} did not start; its log: {log}")
            time.sleep(1)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def sample_index(work: Path) -> Path:
    """The bundled sample corpus indexed with the embedded model (built once under ``work``)."""
    index = work / "sample-index"
    if not (index / "manifest.json").exists():
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "tanglerag.cli", "index", str(SAMPLE), "--out",
                        str(index), "--bm25"], check=True, cwd=ROOT)
    return index


def serve_args(index: Path, port: int, llm_url: str) -> list[str]:
    """``tanglerag serve`` on the fake LLM, with ``service.compat``'s debug line on (the CLI logs at warning), so its
    log says which requests offered tools."""
    boot = ("import logging, sys; logging.getLogger('tanglerag.service.compat').setLevel(logging.DEBUG); "
            "from tanglerag.cli import app; sys.argv[0] = 'tanglerag'; app()")
    return [sys.executable, "-c", boot, "serve", "--index", str(index), "--port", str(port),
            "--set", "llm.backend=openai", "--set", f"llm.base_url={llm_url}",
            "--set", "service.background_tasks=plain"]


def open_webui_env(data: Path, tanglerag_port: int, legacy: bool) -> dict[str, str]:
    """Open WebUI offline, auth off, one OpenAI connection (tanglerag); its defaults otherwise, unless ``legacy``."""
    env = {"DATA_DIR": str(data), "OFFLINE_MODE": "true", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "ENABLE_OLLAMA_API": "false", "ENABLE_OPENAI_API": "true",
           "OPENAI_API_BASE_URL": f"http://127.0.0.1:{tanglerag_port}/v1", "OPENAI_API_KEY": "unused",
           "WEBUI_AUTH": "false", "WEBUI_SECRET_KEY": "open-webui-check-local", "ENABLE_VERSION_UPDATE_CHECK": "false",
           "ENABLE_COMMUNITY_SHARING": "false", "ANONYMIZED_TELEMETRY": "false", "DO_NOT_TRACK": "true",
           "SCARF_NO_ANALYTICS": "true", "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "false",
           "RAG_RERANKING_MODEL_AUTO_UPDATE": "false", "WHISPER_MODEL_AUTO_UPDATE": "false",
           "ENABLE_WEB_SEARCH": "false", "ENABLE_IMAGE_GENERATION": "false",
           "BYPASS_EMBEDDING_AND_RETRIEVAL": "true", "ENABLE_BASE_MODELS_CACHE": "false"}
    if legacy:
        env["DEFAULT_MODEL_PARAMS"] = json.dumps({"function_calling": "legacy"})
    return env


# --- the browser ---------------------------------------------------------------------------------------------------

def chat(url: str, model: str, question: str, shots: Path, chromium: str, wait_s: float) -> str | None:
    """Ask ``question`` of ``model`` in Open WebUI's chat; the message area's text once "Sources:" shows, else None.
    Screenshots go to ``shots``-N-*.png."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium or None, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("request", lambda r: None if r.url.startswith((url, "data:", "blob:", "ws://127.0.0.1"))
                else print("request outside the machine:", r.url[:120]))
        page.goto(f"{url}/?models={model}", wait_until="load", timeout=120_000)
        page.locator("#chat-input").wait_for(timeout=120_000)
        time.sleep(2)
        if page.get_by_text("Okay, Let's Go!").count():  # the release notes shown on a fresh install
            page.get_by_text("Okay, Let's Go!").click()
            time.sleep(1)
        page.locator("#chat-input").click()
        page.keyboard.type(question)
        page.keyboard.press("Enter")
        sent = time.monotonic()
        time.sleep(1)
        page.screenshot(path=f"{shots}-1-working.png")
        try:
            page.get_by_text("Sources:").first.wait_for(timeout=wait_s * 1000)
        except PlaywrightTimeout:
            page.screenshot(path=f"{shots}-9-failed.png")
            print(page.inner_text("body")[:2000])
            return None
        print(f"answer shown {time.monotonic() - sent:.1f} s after sending")
        time.sleep(4)  # the title task and the message's footer
        page.screenshot(path=f"{shots}-2-answer.png")
        if page.get_by_text("Thought for").count():
            page.get_by_text("Thought for").first.click()
            time.sleep(1)
        page.screenshot(path=f"{shots}-3-thinking.png", clip=_down_to_last_message(page))
        messages = page.locator("#messages-container")
        text = messages.inner_text() if messages.count() else page.inner_text("body")
        browser.close()
        return text


LOWEST_LEAF = """() => Math.max(0, ...[...document.querySelectorAll('#messages-container *')]
    .filter(e => !e.children.length && e.getBoundingClientRect().height > 0)
    .map(e => e.getBoundingClientRect().bottom))"""


def _down_to_last_message(page: Any) -> dict[str, float]:
    """The page from its top to just below the last message (its footer), leaving out the empty space and the
    message box under it; the whole viewport when that cannot be measured."""
    viewport = page.viewport_size
    bottom = page.evaluate(LOWEST_LEAF)
    height = bottom + 24 if 100 < bottom < viewport["height"] - 24 else viewport["height"]
    return {"x": 0, "y": 0, "width": viewport["width"], "height": height}


def offered_tools(serve_log: Path) -> list[str]:
    """One line per request that offered tools: how many and their names (from serve's debug line)."""
    return [f"{m.group(1)}: {m.group(2)}" for m in OFFERED.finditer(serve_log.read_text())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("open_webui", type=Path, help="Open WebUI's venv (the folder holding bin/open-webui)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/open-webui-check"), help="index, data, logs, shots")
    parser.add_argument("--index", type=Path, help="an index to serve (default: the sample corpus, built in --work)")
    parser.add_argument("--out", type=Path, help="copy the thinking-block screenshot here (docs/img/open-webui.png)")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--model", default="tanglerag/corg")
    parser.add_argument("--legacy", action="store_true", help="set Open WebUI's Function Calling to Legacy")
    parser.add_argument("--chromium", default="/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else "",
                        help="the browser binary ('' for Playwright's own)")
    parser.add_argument("--answer-wait", type=float, default=300, help="seconds to wait for the answer")
    args = parser.parse_args()
    executable = args.open_webui / "bin" / "open-webui"
    if not executable.exists():
        sys.exit(f"no {executable}: install Open WebUI in its own venv (see this script's docstring)")
    args.work.mkdir(parents=True, exist_ok=True)
    index = args.index or sample_index(args.work)
    data = args.work / "data"
    shutil.rmtree(data, ignore_errors=True)  # a fresh Open WebUI: its settings persist in its data folder
    tanglerag_port, webui_port = free_port(), free_port()
    with ExitStack() as servers:
        llm = servers.enter_context(fake_openai_server(reply))
        servers.enter_context(started(serve_args(index, tanglerag_port, llm["base_url"]), args.work / "serve.log",
                                      f"http://127.0.0.1:{tanglerag_port}/healthz", {"OPENAI_API_KEY": "unused"},
                                      wait_s=300))
        servers.enter_context(started([str(executable), "serve", "--host", "127.0.0.1", "--port", str(webui_port)],
                                      args.work / "open-webui.log",
                                      f"http://127.0.0.1:{webui_port}/health",
                                      open_webui_env(data, tanglerag_port, args.legacy), wait_s=900))
        shown = chat(f"http://127.0.0.1:{webui_port}", args.model, args.question, args.work / "shot", args.chromium,
                     args.answer_wait)
    offered = offered_tools(args.work / "serve.log")
    print(f"Function Calling: {'Legacy' if args.legacy else 'default (native)'}; requests that offered tools, "
          f"answered without a call: {len(offered)}", *offered, sep="\n  ")
    if shown is None:
        sys.exit(f"no answer in Open WebUI's chat: {args.work / 'shot-9-failed.png'}, logs in {args.work}")
    print(shown)
    if args.out:
        shutil.copyfile(args.work / "shot-3-thinking.png", args.out)


if __name__ == "__main__":
    main()
