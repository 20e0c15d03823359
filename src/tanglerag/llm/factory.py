"""Build the configured LLM client from the ``llm`` section (and where the cache and model files live)."""

from __future__ import annotations

from pathlib import Path

from tanglerag.config import LLMConfig
from tanglerag.llm.base import GenerationParams, LLMBackend
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.llm.llamacpp import LlamaCppBackend


def build_backend(cfg: LLMConfig, cache_dir: Path) -> LLMBackend:
    if cfg.backend == "openai":
        # imported here: the openai SDK's types take ~1 s to import, a third of every `tanglerag` command's start,
        # and the default embedded backend never needs them
        from tanglerag.llm.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend(cfg.base_url, cfg.model, api_key_env=cfg.api_key_env, timeout_s=cfg.timeout_s,
                                   max_retries=cfg.max_retries, backoff_s=cfg.backoff_s, concurrency=cfg.concurrency,
                                   max_reply_bytes=cfg.max_reply_bytes)
    return LlamaCppBackend(cfg.model, cache_dir, n_ctx=cfg.n_ctx, n_threads=cfg.n_threads,
                          parallel=cfg.parallel)


def build_llm(cfg: LLMConfig, cache_dir: Path, backend: LLMBackend | None = None) -> LLM:
    defaults = GenerationParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=cfg.seed)
    # llm.cache=false (--no-cache) never opens the file: a damaged or locked cache cannot get in the way
    cache = CallCache(cache_dir / "llm_cache.sqlite3" if cfg.cache else None)
    return LLM(backend or build_backend(cfg, cache_dir), cache, use_cache=cfg.cache, defaults=defaults,
               structured=cfg.structured, structured_stages=cfg.structured_stages, system_prompt=cfg.system_prompt)
