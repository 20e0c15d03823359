"""LiteLLM against `tanglerag serve`: does its OpenAI provider get what our clients rely on, and where does it put
our extra fields?

What it checks, each as an assertion (a failure names what broke and the run exits 1 without writing the docs):
``litellm.completion`` with ``model="openai/tanglerag/concat"`` and ``api_base`` pointing at the service gives the
answer text, our ``usage`` counts, our ``sources`` (LiteLLM 1.110 moves them into
``message.provider_specific_fields``) and ``finish_reason: stop``; streamed, the ``reasoning_content`` deltas (the
method's progress), the answer, ``sources`` on the delta that carries it, ``tanglerag`` on the finish chunk and, with
``stream_options.include_usage``, our usage on the last chunk; ``litellm.stream_chunk_builder`` rebuilds the answer
and the reasoning; an unknown model is a ``litellm.NotFoundError`` (404) and ``n=2`` a ``litellm.BadRequestError``
(400), each carrying our message; ``litellm.acompletion`` plain and streamed; ``litellm.text_completion`` (our legacy
``/v1/completions``) plain and streamed. What LiteLLM keeps of each field (where a client finds it, or "dropped") is
observed rather than asserted where no client of ours needs it (``stream_chunk_builder`` drops ``sources`` and
``tanglerag``).

No model runs: the service (in this process, on a free port of 127.0.0.1, uvicorn in a thread) answers over the
three-passage corpus of the service tests, indexed with the hashing embedder, and a canned LLM that answers
"Paris [n]" from whichever passage says so; what is compared is what LiteLLM makes of the service's responses, so
each check also reads the raw response (httpx) and compares. It does not use the ``tests`` package.

LiteLLM is not in the test extra (see the section this writes): it is installed outside the venv, in a folder
appended to ``sys.path`` (so the venv's own pydantic, httpx and openai stay the ones imported, and LiteLLM runs on
them; its other requirements come from the folder). Checked with litellm 1.110.2 (Python 3.11, offline)::

    .venv/bin/python -m pip install --target /tmp/litellm-site litellm==1.110.2   # done by the script when missing
    nice -n 19 .venv/bin/python benchmarks/litellm_check.py [/tmp/litellm-site] [--no-docs]

It runs offline: ``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set before the import (without it ``import litellm``
fetches its model cost map from GitHub). Writes the ``litellm-client`` section of docs/benchmarks.md (the version,
the install size, the import time in a fresh interpreter, what LiteLLM keeps of each of our fields) unless
``--no-docs``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from run_io import write_section

ROOT = Path(__file__).resolve().parents[1]
PIN = "1.110.2"
MODEL = "tanglerag/concat"
QUESTION = "What is the capital of France?"
MESSAGES = [{"role": "user", "content": QUESTION}]
ANSWER = re.compile(r"^Paris \[\d\]")


# --- LiteLLM, installed beside the venv -----------------------------------------------------------------------------

def install(site: Path) -> None:
    """``litellm==PIN`` into ``site`` with the venv's pip, when the folder has none."""
    if (site / "litellm").is_dir():
        return
    print(f"installing litellm=={PIN} into {site} ...", flush=True)
    subprocess.run(["nice", "-n", "19", sys.executable, "-m", "pip", "install", "--quiet", "--target", str(site),
                    f"litellm=={PIN}"], check=True)


def _name(dist_info: Path) -> str:
    return re.sub(r"[-_.]+", "-", dist_info.name[:-len(".dist-info")].rsplit("-", 1)[0]).lower()


def _size(dist_info: Path, site: Path) -> int:
    """Bytes of a distribution's files, from its RECORD (the paths pip wrote, relative to the folder)."""
    total = 0
    for line in (dist_info / "RECORD").read_text().splitlines():
        path = line.rsplit(",", 2)[0]
        file = site / path
        if file.is_file():
            total += file.stat().st_size
    return total


def footprint(site: Path) -> dict[str, Any]:
    """The folder's distributions, and those the venv does not have already (what LiteLLM adds to it). Called
    before ``site`` goes on ``sys.path``, so the venv's distributions are the venv's alone."""
    ours = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in importlib.metadata.distributions()}
    sizes = {_name(p): _size(p, site) for p in sorted(site.glob("*.dist-info"))}
    new = {n: s for n, s in sizes.items() if n not in ours}
    return {"dists": len(sizes), "mb": sum(sizes.values()) / 1e6, "new": sorted(new, key=new.get, reverse=True),
            "new_mb": sum(new.values()) / 1e6, "litellm_mb": sizes.get("litellm", 0) / 1e6}


def import_seconds(site: Path) -> float:
    """``import litellm`` in a fresh interpreter (what a client script pays), the folder appended as here."""
    code = ("import sys, time; sys.path.append(sys.argv[1]); t = time.perf_counter(); import litellm; "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(site)], check=True, capture_output=True, text=True,
                         env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return float(out.stdout.strip().splitlines()[-1])


# --- the service over a canned LLM ----------------------------------------------------------------------------------

def paris(messages) -> str:
    """The canned model: "Paris [n]" with n the passage that says Paris is France's capital, else "unknown"."""
    found = re.search(r"^\[(\d+)\] Paris: ", messages[-1].content, re.MULTILINE)
    return f"Paris [{found.group(1)}]" if found else "unknown"


def runtime(folder: Path):
    from tanglerag.index.passage_index import store_passages
    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.runtime import Runtime
    from tanglerag.settings import Settings
    from tanglerag.testing import CannedBackend, HashEmbedder
    from tanglerag.types import Passage

    corpus = [Passage(id="p1", title="Paris", text="Paris is the capital of France and its largest city."),
              Passage(id="p2", title="Berlin", text="Berlin is the capital of Germany."),
              Passage(id="p3", title="Madrid", text="Madrid is the capital and most populous city of Spain.")]
    settings = Settings.load(overrides=[f"personal.store_dir={folder / 'users'}", "retrieval.top_k=3",
                                        "auto.entity_signals=false"])  # no spaCy: beside the point here
    embedder = HashEmbedder()
    store_passages(folder / "index", corpus, embedder, settings.index)
    return Runtime(settings, index_dir=folder / "index", llm=LLM(CannedBackend(responder=paris), CallCache(None)),
                   embedder=embedder)


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """The service on a free port of 127.0.0.1, uvicorn in a thread; yields its URL."""
    from tanglerag.service.app import create_app
    from tanglerag.testing import serve_app

    with serve_app(create_app(runtime(folder)), start_timeout_s=30) as url:
        yield url


# --- the checks -----------------------------------------------------------------------------------------------------

class Checks:
    """Runs each check, keeps going after a failure, and says which failed and why."""

    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []

    def run(self, name: str, check) -> Any:
        try:
            result = check()
        except AssertionError as e:
            self.failed.append(f"{name}: {e}")
            print(f"FAIL {name}: {e}", flush=True)
            return None
        except Exception as e:  # LiteLLM raised where it should have answered: the same failure, named
            self.failed.append(f"{name}: {type(e).__module__}.{type(e).__name__}: {str(e)[:300]}")
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            return None
        self.passed.append(name)
        print(f"ok   {name}", flush=True)
        return result


def sources_of(obj) -> tuple[str, Any]:
    """Where LiteLLM put our ``sources`` on a message, delta or choice, and their value ("dropped", None)."""
    specific = getattr(obj, "provider_specific_fields", None) or {}
    if "sources" in specific:
        return f"`{_kind(obj)}.provider_specific_fields[\"sources\"]`", specific["sources"]
    if getattr(obj, "sources", None) is not None:
        return f"`{_kind(obj)}.sources`", obj.sources
    return "dropped", None


def _kind(obj) -> str:
    return {"Message": "message", "Delta": "delta"}.get(type(obj).__name__, "choice")


def usage_of(usage) -> dict[str, int]:
    return {k: getattr(usage, k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


def _usage_kept(usage, ours: dict[str, int]) -> str:
    if usage is None:
        return "dropped"
    return "`usage` (our counts)" if usage_of(usage) == ours else f"`usage` ({usage_of(usage)}, not our {ours})"


def usage_of_raw(response: dict) -> dict[str, int]:
    return {k: response["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


class Probe:
    """The checks' shared ground: LiteLLM, how it reaches the service at ``url``, what the service itself sends for
    the same requests (read with httpx), and what LiteLLM keeps of each field (``kept``, for the docs)."""

    def __init__(self, litellm, url: str) -> None:
        self.litellm = litellm
        self.kw = {"api_base": f"{url}/v1", "api_key": "unused", "num_retries": 0}
        self.chat = {**self.kw, "model": f"openai/{MODEL}", "messages": MESSAGES}
        self.raw = httpx.post(f"{url}/v1/chat/completions", json={"model": MODEL, "messages": MESSAGES},
                              timeout=30).json()
        self.raw_message = self.raw["choices"][0]["message"]
        self.raw_text = httpx.post(f"{url}/v1/completions", json={"model": MODEL, "prompt": QUESTION}, timeout=30).json()
        assert ANSWER.match(self.raw_message["content"]) and self.raw_message["sources"], \
            f"the service's own answer: {self.raw}"
        self.raw_usage = usage_of_raw(self.raw)
        self.kept: dict[str, str] = {}

    def plain(self):
        r = self.litellm.completion(**self.chat)
        m = r.choices[0].message
        assert m.content == self.raw_message["content"], f"answer text {m.content!r}, the service sent {self.raw_message['content']!r}"
        assert usage_of(r.usage) == self.raw_usage, f"usage {usage_of(r.usage)}, the service sent {self.raw_usage}"
        where, sources = sources_of(m)
        assert sources == self.raw_message["sources"], f"sources {where}: {sources!r}, the service sent {self.raw_message['sources']!r}"
        assert r.choices[0].finish_reason == "stop", f"finish_reason {r.choices[0].finish_reason!r}"
        tangle = getattr(r, "tanglerag", None)
        assert isinstance(tangle, dict) and tangle.get("citations") == self.raw["tanglerag"]["citations"], \
            f"response.tanglerag {str(tangle)[:200]!r}"
        assert r.model == MODEL, f"model {r.model!r}"
        self.kept.update(content="`message.content`", usage="`usage` (our counts)", sources=where,
                    tanglerag="`response.tanglerag` (a dict)", finish="`stop`")

    def streamed(self):
        chunks = list(self.litellm.completion(**self.chat, stream=True, stream_options={"include_usage": True}))
        choices = [c.choices[0] for c in chunks if c.choices]
        text = "".join(c.delta.content or "" for c in choices)
        reasoning = "".join(getattr(c.delta, "reasoning_content", None) or "" for c in choices)
        assert text == self.raw_message["content"], f"streamed text {text!r}, the service sent {self.raw_message['content']!r}"
        assert reasoning.startswith("retrieve ...") and "model call:" in reasoning, \
            f"reasoning_content deltas joined: {reasoning!r} (the method's progress, shown as thinking)"
        carrying = next(c.delta for c in choices if c.delta.content)
        where, sources = sources_of(carrying)
        assert sources == self.raw_message["sources"], f"sources on the content delta {where}: {sources!r}"
        assert choices[-1].finish_reason == "stop", f"last finish_reason {choices[-1].finish_reason!r}"
        finish = next((c for c in chunks if c.choices and c.choices[0].finish_reason), None)
        assert isinstance(getattr(finish, "tanglerag", None), dict), "no tanglerag on the finish chunk"
        last = chunks[-1]
        assert getattr(last, "usage", None) is not None and usage_of(last.usage) == self.raw_usage, \
            f"include_usage: last chunk's usage {getattr(last, 'usage', None)}, the service counts {self.raw_usage}"
        details = getattr(last.usage, "completion_tokens_details", None)
        built = self.litellm.stream_chunk_builder(chunks)
        bm = built.choices[0].message
        assert bm.content == text, f"stream_chunk_builder content {bm.content!r}"
        assert getattr(bm, "reasoning_content", None) == reasoning, "stream_chunk_builder lost the reasoning"
        self.kept.update(stream_content="`delta.content`", reasoning="`delta.reasoning_content`", stream_sources=where,
                    stream_tanglerag="the finish chunk's `tanglerag`",
                    stream_usage="the last chunk's `usage` with `stream_options.include_usage`" + (
                        f" (LiteLLM fills in `completion_tokens_details.reasoning_tokens` itself: "
                        f"{details.reasoning_tokens} of our {last.usage.completion_tokens} completion tokens)"
                        if details is not None and getattr(details, "reasoning_tokens", None) else ""),
                    builder_sources=sources_of(bm)[0],
                    builder_tanglerag="kept" if getattr(built, "tanglerag", None) is not None else "dropped",
                    # observed, not assumed: what the rebuilt response says of usage and of how the answer ended
                    builder_usage=_usage_kept(getattr(built, "usage", None), self.raw_usage),
                    builder_finish=f"`{built.choices[0].finish_reason}`")

    def error(self, options: dict, cls, status: int, says: str, field: str):
        def check():
            try:
                self.litellm.completion(**(self.chat | options))
            except cls as e:
                assert e.status_code == status, f"{type(e).__name__} with status {e.status_code}, not {status}"
                assert says in str(e), f"our message {says!r} is not in {str(e)[:200]!r}"
                self.kept[field] = f"`litellm.{cls.__name__}` ({e.status_code}), our message kept"
                return
            except Exception as e:
                raise AssertionError(f"{type(e).__module__}.{type(e).__name__} ({getattr(e, 'status_code', None)}), "
                                     f"not litellm.{cls.__name__}: {str(e)[:200]}") from e
            raise AssertionError("no error raised")
        return check

    def asynchronous(self):
        async def both():
            r = await self.litellm.acompletion(**self.chat)
            stream = await self.litellm.acompletion(**self.chat, stream=True)
            return r, [c async for c in stream]
        r, chunks = asyncio.run(both())
        assert r.choices[0].message.content == self.raw_message["content"], f"acompletion {r.choices[0].message.content!r}"
        assert sources_of(r.choices[0].message)[1] == self.raw_message["sources"], "acompletion lost the sources"
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices)
        assert text == self.raw_message["content"], f"acompletion streamed {text!r}"
        assert reasoning.startswith("retrieve ..."), f"acompletion streamed reasoning {reasoning!r}"

    def legacy(self):
        want = self.raw_text["choices"][0]
        r = self.litellm.text_completion(**self.kw, model=f"openai/{MODEL}", prompt=QUESTION)
        assert r.choices[0].text == want["text"], f"text_completion {r.choices[0].text!r}, the service sent {want['text']!r}"
        assert ANSWER.match(r.choices[0].text), f"text_completion {r.choices[0].text!r}"
        assert usage_of(r.usage) == usage_of_raw(self.raw_text), f"text_completion usage {usage_of(r.usage)}"
        chunks = list(self.litellm.text_completion(**self.kw, model=f"openai/{MODEL}", prompt=QUESTION, stream=True))
        text = "".join(c.choices[0].text or "" for c in chunks if c.choices)
        assert text == want["text"], f"text_completion streamed {text!r}"
        carrying = next(c.choices[0] for c in chunks if c.choices and c.choices[0].text)
        self.kept.update(legacy_sources=sources_of(r.choices[0])[0],
                    legacy_tanglerag="`response.tanglerag`" if getattr(r, "tanglerag", None) is not None else "dropped",
                    legacy_stream_sources=sources_of(carrying)[0],
                    legacy_stream_tanglerag="the finish chunk's `tanglerag`" if any(
                        getattr(c, "tanglerag", None) is not None for c in chunks) else "dropped")


def check_all(litellm, url: str, checks: Checks) -> dict[str, str]:
    """Every check against the service at ``url``; what LiteLLM keeps of each field, for the docs."""
    probe = Probe(litellm, url)
    checks.run("completion: answer, usage, sources, tanglerag, finish_reason stop", probe.plain)
    checks.run("streamed: text, reasoning_content deltas, sources, tanglerag, usage, stream_chunk_builder",
               probe.streamed)
    checks.run("unknown model: litellm.NotFoundError 404", probe.error(
        {"model": "openai/tanglerag/nope"}, litellm.NotFoundError, 404, "unknown model", "unknown"))
    checks.run("n=2: litellm.BadRequestError 400",
               probe.error({"n": 2}, litellm.BadRequestError, 400, "n: only 1 is supported", "n2"))
    checks.run("acompletion: plain and streamed", probe.asynchronous)
    checks.run("text_completion: plain and streamed", probe.legacy)
    return probe.kept


# --- the docs -------------------------------------------------------------------------------------------------------

def section(version: str, size: dict[str, Any], seconds: float, kept: dict[str, str], checks: Checks) -> str:
    new = size["new"]
    shown = ", ".join(new)  # largest first
    k = kept.get
    return f"""
## LiteLLM as a client (`benchmarks/litellm_check.py`, loopback, one run)

LiteLLM {version} (its OpenAI provider: `model="openai/tanglerag/<method>"`, `api_base="http://HOST:8000/v1"`) against
the service on 127.0.0.1 over a canned LLM, offline (`LITELLM_LOCAL_MODEL_COST_MAP=True`). All {len(checks.passed)}
checks passed: completion, streamed completion, the two errors, `acompletion` plain and streamed, `text_completion`
plain and streamed; each answer is compared with the service's raw response. What LiteLLM keeps of our fields:

| our field | `completion` | `completion(stream=True)` | `stream_chunk_builder` of the stream |
|---|---|---|---|
| answer (`content`) | {k('content')} | {k('stream_content')} | `message.content` |
| `reasoning_content` (the progress) | not sent | {k('reasoning')} | `message.reasoning_content` (joined) |
| `usage` | {k('usage')} | {k('stream_usage')} | {k('builder_usage')} |
| `sources` | {k('sources')} | {k('stream_sources')} | {k('builder_sources')} |
| `tanglerag` | {k('tanglerag')} | {k('stream_tanglerag')} | {k('builder_tanglerag')} |
| `finish_reason` | {k('finish')} | `stop` | {k('builder_finish')} |

`text_completion` (our `/v1/completions`): the text and usage as sent; `sources` as {k('legacy_sources')} and
`tanglerag` as {k('legacy_tanglerag')}; streamed, `sources` {k('legacy_stream_sources')} and `tanglerag`
{k('legacy_stream_tanglerag')}. Errors: an unknown model is {k('unknown')}; `n=2` is
{k('n2')}. A client that wants the sources of a streamed answer reads them off the chunks, not the rebuilt message.

Not in the test extra: `pip install --target` put {size['dists']} distributions, {size['mb']:.0f} MB with the `.pyc`
pip compiles, in its folder; {len(new)} of them ({size['new_mb']:.0f} MB; litellm itself {size['litellm_mb']:.0f} MB)
are not in our venv: {shown}. `import litellm` took {seconds:.1f} s in a fresh interpreter on the machine that ran this, which
every test worker importing it would pay. LiteLLM's OpenAI provider makes its requests with the `openai` SDK (its
errors subclass the SDK's), which the test extra already runs against the service (`tests/service/test_openai_sdk.py`,
`test_openai_contract.py`), as it does LangChain's `ChatOpenAI`; this script is run by hand when our response shape
or LiteLLM changes.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=Path("/tmp/litellm-site"),
                        help="the folder LiteLLM is (or gets) installed in with pip --target")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args()

    install(args.site)
    size = footprint(args.site)
    seconds = import_seconds(args.site)
    print(f"import litellm (fresh interpreter): {seconds:.1f} s; {size['dists']} distributions, {size['mb']:.0f} MB; "
          f"new to the venv: {len(size['new'])}, {size['new_mb']:.0f} MB", flush=True)
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before the import: no fetch of the cost map
    sys.path.append(str(args.site))
    import litellm

    litellm.suppress_debug_info = True  # its "Provider List: https://..." lines on each error
    version = importlib.metadata.version("litellm")
    if version != PIN:
        print(f"note: litellm {version} in {args.site}, the script was last checked with {PIN}")
    checks = Checks()
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder)) as url:
        kept = check_all(litellm, url, checks)
    if checks.failed:
        sys.exit(f"litellm {version}: {len(checks.failed)} check(s) failed:\n  " + "\n  ".join(checks.failed))
    text = section(version, size, seconds, kept, checks)
    print(text)
    if not args.no_docs:
        write_section(ROOT / "docs/benchmarks.md", "litellm-client", text)


if __name__ == "__main__":
    main()
