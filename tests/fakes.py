"""Test doubles: a canned-response LLM backend, a hashing embedder, a fake OpenAI server."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.llm.base import GenerationParams, Message, RawCompletion

Rule = tuple[str, str]


class CannedBackend:
    """Answers from rules: the first rule whose pattern (regex) matches the last user message wins.

    Records every request so tests can assert what the pipeline sent.
    """

    name = "canned"

    def __init__(self, rules: list[Rule] | None = None, default: str = "unknown",
                 responder: Callable[[list[Message]], str] | None = None, model: str = "canned-v1") -> None:
        self.rules = [(re.compile(p, re.IGNORECASE | re.DOTALL), r) for p, r in (rules or [])]
        self.default = default
        self.responder = responder
        self.model = model
        self.requests: list[tuple[list[Message], GenerationParams]] = []

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def max_concurrency(self) -> int:
        return 1

    def reply_for(self, messages: list[Message]) -> str:
        if self.responder is not None:
            return self.responder(messages)
        prompt = messages[-1].content
        for pattern, response in self.rules:
            if pattern.search(prompt):
                return response
        return self.default

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        self.requests.append((messages, params))
        text = self.reply_for(messages)
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        return RawCompletion(texts=[text] * params.n, prompt_tokens=prompt_tokens,
                             completion_tokens=len(text.split()) * params.n)


class HashEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words get similar vectors."""

    def __init__(self, model_name: str = "hash-64", dim: int = 64) -> None:
        self.config = EmbeddingConfig(model=model_name)
        self.dim = dim

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def dimension(self) -> int:
        return self.dim

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype="float32")
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


@contextmanager
def fake_openai_server(reply: Callable[[dict], str], fail_first: int = 0, status: int = 503) -> Iterator[dict]:
    """Serve /v1/chat/completions on localhost; the first ``fail_first`` requests get ``status``."""
    state = {"requests": 0, "bodies": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"] += 1
            state["bodies"].append(body)
            state["auth"] = self.headers.get("Authorization")
            if state["requests"] <= fail_first:
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"busy")
                return
            text = reply(body)
            payload = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 11, "completion_tokens": len(text.split())}}
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["base_url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
