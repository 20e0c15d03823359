"""OpenAI-compatible chat-completions backend (OpenAI, vLLM, Ollama, llama.cpp server).

Retries timeouts, connection errors, 429 and 5xx (tenacity) with exponential backoff, or after the server's
Retry-After when it sends one; other 4xx errors are the caller's fault and fail at once with the server's message.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from tanglerag.errors import LLMError, ServerUnreachableError, StructuredOutputUnsupported
from tanglerag.llm.base import GenerationParams, Message, RawCompletion, response_format

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_MAX_RETRY_AFTER_S = 60.0  # a server asking for longer is better reported than waited on


_PROBE_TIMEOUT_S = 5.0


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
            # a kept-alive connection per request in flight: httpx keeps 20 by default, and every request beyond
            # them would open (and the server accept) a new connection
            limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
            self._client = httpx.Client(timeout=self.timeout_s, headers=headers, transport=self._transport,
                                        limits=limits)
        return self._client

    def warm_up(self) -> None:
        """Nothing to load: the server holds the model (it is reached on the first call)."""

    def not_ready(self) -> str | None:
        """Asks the server for its model list (one short request, no generation)."""
        try:
            response = self._http().get(self.base_url + "/models", timeout=min(self.timeout_s, _PROBE_TIMEOUT_S))
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            return f"the LLM server cannot be reached ({type(exc).__name__})"
        if response.status_code >= 400:
            return f"the LLM server answers HTTP {response.status_code}"
        return None

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
        if params.json_schema is not None:
            body["response_format"] = response_format(params.json_schema)
        data = self._post_with_retries("/chat/completions", body)
        try:
            texts = [choice["message"]["content"] or "" for choice in data["choices"]]
            if len(texts) != params.n:
                raise ValueError(f"{len(texts)} choices for n={params.n}")
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMError(f"server at {self.base_url} returned an unexpected response: {str(data)[:300]}") from exc
        usage = data.get("usage")
        return RawCompletion(texts=texts, prompt_tokens=_count(usage, "prompt_tokens"),
                             completion_tokens=_count(usage, "completion_tokens"))

    def _post_with_retries(self, path: str, body: dict[str, object]) -> dict:
        url = self.base_url + path
        retrying = Retrying(stop=stop_after_attempt(self.max_retries + 1), wait=self._wait,
                            retry=retry_if_exception_type(_Retryable), before_sleep=self._log_retry, reraise=True)
        started = time.monotonic()
        try:
            return retrying(self._post_once, url, body)
        except _Retryable as exc:
            attempts = f"{self.max_retries + 1} attempts over {time.monotonic() - started:.0f} s"
            if exc.answered:
                raise LLMError(f"LLM server at {url} kept failing after {attempts}; it last answered {exc}") from None
            raise ServerUnreachableError(
                f"LLM server at {url} unreachable after {attempts} ({exc}; each attempt waits up to "
                f"llm.timeout_s={self.timeout_s:g} s); check llm.base_url and that the server is running") from None

    def _post_once(self, url: str, body: dict[str, object]) -> dict:
        try:
            with self._slots:
                response = self._http().post(url, json=body)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code in _RETRY_STATUS:
            raise _Retryable(f"HTTP {response.status_code}: {response.text[:200]}", answered=True,
                             retry_after=_retry_after(response))
        if response.status_code >= 400:
            refusal = f"server at {url} refused the request: HTTP {response.status_code}: {response.text[:300]}"
            if response.status_code == 400 and "response_format" in body and _about_schemas(response.text):
                raise StructuredOutputUnsupported(refusal)
            raise LLMError(refusal)
        try:
            data = response.json()
        except ValueError as exc:
            raise LLMError(f"server at {url} did not return JSON: {response.text[:200]}") from exc
        if not isinstance(data, dict):
            raise LLMError(f"server at {url} returned JSON that is not an object: {response.text[:200]}")
        return data

    def _wait(self, state: RetryCallState) -> float:
        """The server's Retry-After when it sent one (up to a minute), else exponential backoff."""
        told = getattr(state.outcome.exception(), "retry_after", None) if state.outcome else None
        return min(told, _MAX_RETRY_AFTER_S) if told is not None else self.backoff_s * 2 ** (state.attempt_number - 1)

    def _log_retry(self, state: RetryCallState) -> None:
        problem = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        log.warning("retrying %s in %.1fs (attempt %d/%d): %s", self.base_url, delay, state.attempt_number,
                    self.max_retries, problem)


class _Retryable(Exception):
    """A failure worth another attempt: the server was unreachable, or ``answered`` with a transient status."""

    def __init__(self, problem: str, *, answered: bool = False, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.answered = answered
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header given in seconds (the HTTP-date form is rare from model servers)."""
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def _about_schemas(text: str) -> bool:
    """A 400 that names the output schema: the server does not take one (others are the request's fault)."""
    lowered = text.lower()
    return any(word in lowered for word in ("response_format", "json_schema", "structured output", "grammar"))


def _count(usage: object, key: str) -> int:
    """A token count from the reply's ``usage``; a usage of the wrong shape counts as absent (0)."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
