"""Test doubles shipped for users' own tests: a canned-response LLM, a hashing embedder, a runtime built on
both, and a fake OpenAI-compatible server.

No model is loaded and nothing leaves the process, so a pipeline built on these runs in milliseconds
and deterministically, with the real cache, tracker and trace around it.

>>> from tanglerag.methods.base import Resources
>>> from tanglerag.methods.concat.method import ConcatMethod
>>> from tanglerag.types import Passage, Question, RetrievedPassage
>>> llm = canned_llm([("capital of France", "Paris [1]")])
>>> hits = [RetrievedPassage(passage=Passage(id="fr", text="Paris is the capital of France."), score=1.0, rank=1)]
>>> answer = ConcatMethod(Resources.for_llm(llm, embedder=HashEmbedder())).answer(
...     Question(text="What is the capital of France?"), hits)
>>> answer.text, answer.citations, len(answer.trace.calls)
('Paris [1]', ['fr'], 1)
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.errors import StructuredOutputUnsupported
from tanglerag.llm.base import GenerationParams, RawCompletion, heard_safely
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.trace import Message

Rule = tuple[str, str]


class CannedBackend:
    """Answers from rules: the first rule whose pattern (regex) matches the last user message wins.

    Records every request so tests can assert what the pipeline sent.
    """

    name = "canned"

    def __init__(self, rules: list[Rule] | None = None, default: str = "unknown",
                 responder: Callable[[list[Message]], str] | None = None, model: str = "canned-v1",
                 structured: bool = False, concurrency: int = 1) -> None:
        """``structured``: take output schemas (then a schema call's reply must be JSON, as a constrained model's
        is); without it a schema call is refused the way a server without structured outputs refuses it.
        ``concurrency``: calls answered at once (the LLM client's semaphore), each in one of the client's worker
        threads, as a blocking backend's are: a responder may take its time, as a model does, without holding up
        the event loop."""
        self.rules = [(re.compile(p, re.IGNORECASE | re.DOTALL), r) for p, r in (rules or [])]
        self.default = default
        self.responder = responder
        self.model = model
        self.structured = structured
        self.requests: list[tuple[list[Message], GenerationParams]] = []
        self.concurrency = concurrency

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def max_concurrency(self) -> int:
        return self.concurrency

    def warm_up(self) -> None:
        """Nothing to load."""

    def not_ready(self) -> str | None:
        return None

    def reply_for(self, messages: list[Message]) -> str:
        if self.responder is not None:
            return self.responder(messages)
        prompt = messages[-1].content
        for pattern, response in self.rules:
            if pattern.search(prompt):
                return response
        return self.default

    def stream(self, messages: list[Message], params: GenerationParams,
               on_text: Callable[[str], None]) -> RawCompletion:
        """``generate``, its reply handed to ``on_text`` a word at a time (as a model streams it)."""
        raw = self.generate(messages, params)
        words = raw.texts[0].split(" ")
        heard = heard_safely(on_text)
        for i, word in enumerate(words):
            heard(word if i == 0 else " " + word)
        return raw

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        if params.json_schema is not None and not self.structured:
            raise StructuredOutputUnsupported("the canned backend was built without structured=True")
        self.requests.append((messages, params))
        text = self.reply_for(messages)
        if params.json_schema is not None:
            _check_json(text)
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        return RawCompletion(texts=[text] * params.n, prompt_tokens=prompt_tokens,
                             completion_tokens=len(text.split()) * params.n)


def _check_json(reply: str) -> None:
    """A schema call's canned reply must be JSON, as a constrained model's is (or its start, when the token budget
    cut it off): a test whose rule gives text there tests the parser on a reply no model would send."""
    if not reply.lstrip().startswith(("{", "[")):
        raise ValueError(f"the canned reply to a schema call is not JSON: {reply[:80]!r}")


_WORDS = re.compile(r"\w+")


def _bucket(word: str, dim: int) -> int:
    """A word's dimension (each embedder remembers it per word: words repeat across passages)."""
    return int(hashlib.md5(word.encode()).hexdigest(), 16) % dim


class HashEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words get similar vectors."""

    def __init__(self, model_name: str = "hash-64", dim: int = 64) -> None:
        self.config = EmbeddingConfig(model=model_name)
        self.dim = dim
        self._buckets: dict[str, int] = {}  # each word's dimension, looked up without a call per word

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def dimension(self) -> int:
        return self.dim

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        # the eval throughput benchmark embeds with this to measure the runner, not a model: it is kept cheap (a dict
        # lookup per word, counts by bincount; np.add.at and a cached call per word took ~0.1 ms a passage)
        out = np.zeros((len(texts), self.dim), dtype="float32")
        buckets = self._buckets
        for row, text in enumerate(texts):
            words = _WORDS.findall(text.lower())
            for word in set(words).difference(buckets):
                buckets[word] = _bucket(word, self.dim)
            if words:
                out[row] = np.bincount([buckets[word] for word in words], minlength=self.dim)
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out




def canned_llm(rules: list[Rule] | None = None, *, default: str = "unknown",
               responder: Callable[[list[Message]], str] | None = None, cache_path: Path | None = None,
               concurrency: int = 1) -> LLM:
    """An LLM client around a ``CannedBackend`` (memory cache unless ``cache_path`` is given)."""
    return LLM(CannedBackend(rules, default=default, responder=responder, concurrency=concurrency),
               CallCache(cache_path))


def canned_runtime(settings: Settings, rules: list[Rule] | None = None, *, default: str = "unknown",
                   responder: Callable[[list[Message]], str] | None = None) -> Runtime:
    """A runtime on a canned LLM and the hashing embedder, e.g. what each Ray actor of a test builds."""
    return Runtime(settings, llm=canned_llm(rules, default=default, responder=responder), embedder=HashEmbedder())


@contextmanager
def serve_app(app: Any, host: str = "127.0.0.1", start_timeout_s: float = 60.0) -> Iterator[str]:
    """``app`` (an ASGI app: the service's ``create_app(...)``) served by uvicorn on ``host`` and a free port, in a
    thread, as ``tanglerag serve`` runs it, so a test sees what goes over the wire (headers, streams, status lines)
    rather than a test client's view; yields a loopback URL. A start that fails (the app's startup raised) or takes
    longer than ``start_timeout_s`` raises."""
    import uvicorn

    with socket.socket() as s:
        s.bind((host, 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=_run_quietly, args=(server,), daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the service did not start on {host}:{port}")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _run_quietly(server: Any) -> None:
    """uvicorn ends a failed start with SystemExit, which in a thread is only noise: the thread's end says it."""
    with suppress(SystemExit):
        server.run()


class _ManyClientsServer(ThreadingHTTPServer):
    request_queue_size = 256  # the listen backlog: throughput runs open dozens of connections at once
    daemon_threads = True


@contextmanager
def fake_openai_server(reply: Callable[[dict[str, Any]], str], fail_first: int = 0, status: int = 503,
                       payload: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
                       fail_body: bytes = b"busy", delay_s: float = 0.0) -> Iterator[dict[str, Any]]:
    """Serve /v1/chat/completions on localhost, a thread per connection; the first ``fail_first`` requests get
    ``status``, and every reply waits ``delay_s`` (a model's latency, for throughput tests).

    ``payload`` may return a whole JSON reply for a request (a malformed one, say); None means the usual one.
    Yields a dict with ``base_url`` and what was asked: ``requests`` (a count), ``bodies``, ``auth``, and
    ``connections``: the client ports the requests came from (one per connection).
    """
    state: dict[str, Any] = {"requests": 0, "bodies": [], "connections": set()}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real model servers do
        disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall between
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state["requests"] += 1
                state["bodies"].append(body)
                state["auth"] = self.headers.get("Authorization")
                state["connections"].add(self.client_address[1])
                number = state["requests"]
            time.sleep(delay_s)
            if number <= fail_first:
                self.send_response(status)
                self.send_header("Content-Length", str(len(fail_body)))
                self.end_headers()
                self.wfile.write(fail_body)
                return
            raw = payload(body) if payload else None
            if raw is None and body.get("stream"):
                self.stream(reply(body))
                return
            if raw is None:
                text = reply(body)
                raw = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 11, "completion_tokens": len(text.split())}}
            data = json.dumps(raw).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def stream(self, text: str) -> None:
            """The reply as a server streams it: a chunk per word, the usage, then [DONE] (one connection each)."""
            words = text.split(" ")
            deltas = [w if i == 0 else " " + w for i, w in enumerate(words)]
            chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"content": d}}]} for d in deltas]
            chunks.append({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": len(words)}})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    server = _ManyClientsServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["base_url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
