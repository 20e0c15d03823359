"""Test doubles shipped for users' own tests: a canned-response LLM and a hashing embedder.

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
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.llm.base import GenerationParams, Message, RawCompletion
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM

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

    def warm_up(self) -> None:
        """Nothing to load."""

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




def canned_llm(rules: list[Rule] | None = None, *, default: str = "unknown",
               responder: Callable[[list[Message]], str] | None = None, cache_path: Path | None = None) -> LLM:
    """An LLM client around a ``CannedBackend`` (memory cache unless ``cache_path`` is given)."""
    return LLM(CannedBackend(rules, default=default, responder=responder), CallCache(cache_path))
