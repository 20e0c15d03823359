"""OpenAI-compatible chat-completions backend (OpenAI, vLLM, Ollama, llama.cpp server).

Retries timeouts, connection errors, 429 and 5xx with exponential backoff; other
4xx errors are the caller's fault and fail at once with the server's message.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import httpx

from tanglerag.errors import LLMError, ServerUnreachableError
from tanglerag.llm.base import GenerationParams, Message, RawCompletion

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAICompatBackend:
    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 120.0,
                 max_retries: int = 4, backoff_s: float = 1.0, concurrency: int = 4,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._concurrency = max(1, concurrency)
        self._slots = threading.BoundedSemaphore(self._concurrency)
        self._transport = transport
        self._client: httpx.Client | None = None

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model}"

    @property
    def max_concurrency(self) -> int:
        return self._concurrency

    def _http(self) -> httpx.Client:
        if self._client is None:
            headers = {}
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._client = httpx.Client(timeout=self.timeout_s, headers=headers, transport=self._transport)
        return self._client

    def warm_up(self) -> None:
        """Nothing to load: the server holds the model (it is reached on the first call)."""

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        body: dict[str, object] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "n": params.n,
            "seed": params.seed,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        data = self._post_with_retries("/chat/completions", body)
        try:
            texts = [choice["message"]["content"] or "" for choice in data["choices"]]
            if len(texts) != params.n:
                raise ValueError(f"{len(texts)} choices for n={params.n}")
            usage = data.get("usage") or {}
            return RawCompletion(texts=texts, prompt_tokens=int(usage.get("prompt_tokens", 0)),
                                 completion_tokens=int(usage.get("completion_tokens", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMError(f"server at {self.base_url} returned an unexpected response: {str(data)[:300]}") from exc

    def _post_with_retries(self, path: str, body: dict[str, object]) -> dict:
        url = self.base_url + path
        last_problem = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                delay = self.backoff_s * (2 ** (attempt - 1))
                log.warning("retrying %s in %.1fs (attempt %d/%d): %s", url, delay, attempt, self.max_retries, last_problem)
                time.sleep(delay)
            try:
                with self._slots:
                    response = self._http().post(url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in _RETRY_STATUS:
                last_problem = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:
                raise LLMError(f"server at {url} refused the request: HTTP {response.status_code}: {response.text[:300]}")
            try:
                return response.json()
            except ValueError as exc:
                raise LLMError(f"server at {url} did not return JSON: {response.text[:200]}") from exc
        if last_problem.startswith("HTTP"):
            raise LLMError(f"LLM server at {url} kept failing after {self.max_retries + 1} attempts; it last answered "
                           f"{last_problem}")
        raise ServerUnreachableError(f"LLM server at {url} unreachable after {self.max_retries + 1} attempts ({last_problem}); "
                                     "check llm.base_url and that the server is running")
