"""The LLM client every pipeline uses: backend + cache, one call or many."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tanglerag.llm.base import Completion, GenerationParams, LLMBackend, Message
from tanglerag.llm.cache import CallCache, cache_key


@dataclass(frozen=True)
class Request:
    messages: list[Message]
    params: GenerationParams


class LLM:
    """Cached access to one backend.

    ``use_cache=False`` on the client bypasses the cache globally; the same flag on
    ``complete`` bypasses it for one call (the fresh answer still refreshes the cache).
    """

    def __init__(self, backend: LLMBackend, cache: CallCache | None = None, *, use_cache: bool = True,
                 defaults: GenerationParams | None = None) -> None:
        self.backend = backend
        self.cache = cache if cache is not None else CallCache(None)
        self.use_cache = use_cache
        self.defaults = defaults if defaults is not None else GenerationParams()

    def params(self, **overrides: object) -> GenerationParams:
        """Defaults from config, with per-call overrides (None values ignored)."""
        values = self.defaults.model_dump()
        values.update({k: v for k, v in overrides.items() if v is not None})
        if isinstance(values.get("stop"), list):
            values["stop"] = tuple(values["stop"])
        return GenerationParams.model_validate(values)

    def complete(self, messages: list[Message], params: GenerationParams | None = None, *,
                 use_cache: bool = True) -> Completion:
        params = params or self.defaults
        key = cache_key(self.backend.name, self.backend.model_id, messages, params)
        if self.use_cache and use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return Completion(**hit.model_dump(), cached=True)
        start = time.perf_counter()
        raw = self.backend.generate(messages, params)
        raw = raw.model_copy(update={"seconds": time.perf_counter() - start})
        self.cache.put(key, raw)
        return Completion(**raw.model_dump(), cached=False)

    def complete_many(self, requests: list[Request], *, use_cache: bool = True) -> list[Completion]:
        """Run several calls, in parallel up to the backend's concurrency; order is preserved."""
        workers = max(1, min(self.backend.max_concurrency, len(requests)))
        if workers == 1:
            return [self.complete(r.messages, r.params, use_cache=use_cache) for r in requests]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda r: self.complete(r.messages, r.params, use_cache=use_cache), requests))

    def chat(self, system: str, user: str, params: GenerationParams | None = None) -> Completion:
        return self.complete([Message(role="system", content=system), Message(role="user", content=user)], params)
