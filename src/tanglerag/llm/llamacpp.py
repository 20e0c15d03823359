"""Embedded llama.cpp backend through xllamacpp.

Why xllamacpp rather than llama-cpp-python: on this class of machine it is a prebuilt
CPU wheel (installs in ~2 s) while llama-cpp-python compiles for ~7 minutes on every
fresh machine; the measured speed cost is ~12% (see docs/llm_backends.md). The
in-process server keeps the KV cache of the previous prompt, so calls sharing a long
prefix (instructions, question, then varying passages) skip re-reading it.

``parallel`` slots decode several requests together (llama.cpp's continuous batching): one process then
serves several questions at once, each slot with its own ``n_ctx`` window and its own prefix cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tanglerag.errors import LLMError
from tanglerag.llm.base import GenerationParams, RawCompletion, heard_safely, response_format
from tanglerag.llm.model_files import resolve_gguf
from tanglerag.trace import Message

log = logging.getLogger(__name__)


class LlamaCppBackend:
    name = "llamacpp"

    def __init__(self, model: str, cache_dir: Path, *, n_ctx: int = 4096, n_threads: int = 2,
                 parallel: int = 1) -> None:
        """Cheap: the model file is resolved and loaded on the first call."""
        self.model_spec = model
        self.cache_dir = cache_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.parallel = parallel
        self._server: Any = None
        self._path: Path | None = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(parallel)  # more requests than slots would queue in the server

    @property
    def model_id(self) -> str:
        # The spec names the weights: built-in names are sha256-verified, paths are the user's.
        return self.model_spec

    @property
    def max_concurrency(self) -> int:
        return self.parallel

    def model_path(self) -> Path:
        if self._path is None:
            self._path = resolve_gguf(self.model_spec, self.cache_dir)
        return self._path

    def warm_up(self) -> None:
        """Load the model now rather than on the first call."""
        with self._lock:
            self._load()

    def not_ready(self) -> str | None:
        return None if self._server is not None else "the model is not loaded yet"

    def _load(self) -> Any:
        if self._server is not None:
            return self._server
        path = self.model_path()
        try:
            import xllamacpp
        except ImportError as exc:
            raise LLMError("the embedded backend needs xllamacpp: pip install xllamacpp") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.n_ctx * self.parallel  # llama.cpp splits the window between slots: each keeps n_ctx
        params.n_parallel = self.parallel
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        params.verbosity = 0 if log.isEnabledFor(logging.DEBUG) else -1
        params.warmup = False
        log.info("loading %s (n_ctx=%d, threads=%d, slots=%d)", path, self.n_ctx, self.n_threads, self.parallel)
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # the C++ loader raises a bare RuntimeError
            raise LLMError(f"llama.cpp could not load {path}: {exc}") from exc
        return self._server

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        with self._lock:
            server = self._load()
        with self._slots:
            texts: list[str] = []
            prompt_tokens = completion_tokens = 0
            for i in range(params.n):  # the server allows n=1 only: sample with distinct seeds
                response = server.handle_chat_completions(_request(messages, params, params.seed + i))
                if not isinstance(response, dict) or "error" in response:
                    error = response.get("error") if isinstance(response, dict) else response
                    raise LLMError(_rejection(error))
                texts.append(response["choices"][0]["message"].get("content") or "")
                usage = response.get("usage", {})
                if i == 0:
                    prompt_tokens = int(usage.get("prompt_tokens", 0))
                completion_tokens += int(usage.get("completion_tokens", 0))
            return RawCompletion(texts=texts, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def stream(self, messages: list[Message], params: GenerationParams,
               on_text: Callable[[str], None]) -> RawCompletion:
        """One completion (n=1) whose text goes to ``on_text`` piece by piece as llama.cpp writes it (the server
        calls back within ``handle_chat_completions``, on this thread); the same text ``generate`` returns."""
        with self._lock:
            server = self._load()
        pieces: list[str] = []
        usage: dict[str, Any] = {}
        failure: list[Any] = []
        on_text = heard_safely(on_text)  # an exception raised inside the server's callback would end the reply

        def heard(chunk: Any) -> None:
            if not isinstance(chunk, dict) or "error" in chunk:
                failure.append(chunk.get("error") if isinstance(chunk, dict) else chunk)
                return
            usage.update(chunk.get("usage") or {})
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    pieces.append(text)
                    on_text(text)

        request = _request(messages, params, params.seed) | {"stream": True, "stream_options": {"include_usage": True}}
        with self._slots:
            response = server.handle_chat_completions(request, heard)
        if failure or isinstance(response, dict):  # an error before the first chunk is returned, not called back
            raise LLMError(_rejection(failure[0] if failure else response.get("error", response)))
        return RawCompletion(texts=["".join(pieces)], prompt_tokens=int(usage.get("prompt_tokens", 0)),
                             completion_tokens=int(usage.get("completion_tokens", 0)))


def _request(messages: list[Message], params: GenerationParams, seed: int) -> dict[str, Any]:
    """The chat-completions request llama.cpp's server reads for one completion."""
    request: dict[str, Any] = {"messages": [m.model_dump() for m in messages], "temperature": params.temperature,
                               "max_tokens": params.max_tokens, "seed": seed}
    if params.stop:
        request["stop"] = list(params.stop)
    if params.json_schema is not None:
        request["response_format"] = response_format(params.json_schema)
    return request


def _rejection(error: Any) -> str:
    """One line for the user; a prompt longer than the window says which setting to raise."""
    if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
        return (f"the prompt ({error.get('n_prompt_tokens', '?')} tokens) does not fit the model's context window "
                f"(llm.n_ctx={error.get('n_ctx', '?')}): raise it (--set llm.n_ctx=12288) or retrieve fewer passages")
    return f"llama.cpp rejected the request: {error}"
