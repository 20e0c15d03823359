"""OpenAI-compatible chat-completions backend (OpenAI, vLLM, Ollama, llama.cpp server), on the official ``openai`` SDK.

The SDK makes the attempts: it retries timeouts, connection errors, 408, 409, 429 and 5xx, and fails at once on other
4xx. Between attempts it waits what the server's Retry-After (or Retry-After-Ms) asks, up to ``_MAX_RETRY_AFTER_S``,
else ``llm.backoff_s`` doubled per retry (1, 2, 4 s ... by default, no jitter): the SDK's own schedule (0.5 s
doubling up to 8 s, with jitter) is not a setting, so ``_PacedOpenAI`` replaces it. A Retry-After over two minutes
is the SDK's to judge: it reports the error at once rather than wait. This module maps what finally failed onto our
errors, with the server's own words (a URL in them, the server's own included, without its credentials: see
``tanglerag.redaction``), and reads replies leniently (servers other than OpenAI's vary in shape).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import httpx
import openai

from tanglerag.aio import per_loop, run_sync
from tanglerag.errors import LLMError, ServerUnreachableError, StructuredOutputUnsupported
from tanglerag.llm.base import GenerationParams, RawCompletion, heard_safely, response_format
from tanglerag.redaction import without_credentials
from tanglerag.trace import Message

if TYPE_CHECKING:
    import httpx2
    from openai._models import FinalRequestOptions

log = logging.getLogger(__name__)

_MAX_RETRY_AFTER_S = 60.0  # a server asking for longer is better reported than waited on
_PROBE_TIMEOUT_S = 5.0
_KEYLESS = "no-key"  # the SDK insists on a key; with none configured it is never sent (see _headers)


class _Paced:
    """The SDK's clients, waiting between attempts as ``llm.backoff_s`` and our cap on Retry-After say."""

    backoff_s = 1.0  # set per backend after construction: the SDK's ``copy`` rebuilds clients from its own arguments
    base_url: Any
    max_retries: int

    def _calculate_retry_timeout(self, remaining_retries: int, options: FinalRequestOptions,
                                 response_headers: httpx2.Headers | None = None) -> float:
        """Called by the SDK once it decided to retry: the server's Retry-After, else exponential backoff."""
        told: float | None = self._parse_retry_after_header(response_headers)  # type: ignore[attr-defined]
        retries_taken = options.get_max_retries(self.max_retries) - remaining_retries
        if told is not None and math.isfinite(told):
            delay = min(max(told, 0.0), _MAX_RETRY_AFTER_S)
        else:
            delay = self.backoff_s * 2 ** retries_taken
        log.warning("retrying %s in %.1fs (retry %d of %d)", without_credentials(str(self.base_url)), delay,
                    retries_taken + 1, options.get_max_retries(self.max_retries))
        return delay


class _PacedOpenAI(_Paced, openai.OpenAI):
    """The synchronous client: the readiness probe's."""


class _PacedAsyncOpenAI(_Paced, openai.AsyncOpenAI):
    """The client every generation goes through."""


class OpenAICompatBackend:
    """Chat completions from a server that speaks OpenAI's API, at most ``concurrency`` requests at once from each event
    loop (the portal's, the service's).

    ``transport`` replaces the network (tests give an ``httpx.MockTransport``).
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 120.0,
                 max_retries: int = 4, backoff_s: float = 1.0, concurrency: int = 4, max_reply_bytes: int = 4_000_000,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_reply_bytes = max_reply_bytes
        self._concurrency = max(1, concurrency)
        self._idle = per_loop(self._slots)  # a client per request in flight, in each event loop; see _slot
        self._transport = transport
        self._headers: Mapping[str, str | openai.Omit] = {}

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model}"

    @property
    def max_concurrency(self) -> int:
        return self._concurrency

    def _slots(self) -> asyncio.LifoQueue[_PacedAsyncOpenAI | None]:
        """``concurrency`` places for clients, each made on first use (None until then)."""
        idle: asyncio.LifoQueue[_PacedAsyncOpenAI | None] = asyncio.LifoQueue()
        for _ in range(self._concurrency):
            idle.put_nowait(None)
        return idle

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[_PacedAsyncOpenAI]:
        """A client of its own for one request, waiting while ``concurrency`` requests are in flight.

        Each slot's client keeps one connection alive. One client shared by every request would hold them all in
        one httpcore pool, which scans all its connections, under its lock, each time a request starts or ends
        (encode/httpcore#1035, open): at 64 in flight that bookkeeping was the driver's largest CPU cost. The
        most recently used client is handed out first, so a run below the limit keeps reusing warm connections.
        """
        idle = self._idle.get()
        client = await idle.get()
        try:
            client = client or self._connect_async()  # the key is read on first use: it may be set after __init__
            yield client
        finally:
            idle.put_nowait(client)

    @functools.cached_property
    def _tls(self) -> ssl.SSLContext:
        """One TLS context for every slot's client: httpx loads the CA bundle for each one it makes (~50 ms of
        CPU), which 64 slots would pay 64 times."""
        return httpx.create_ssl_context()

    def _key(self) -> str | None:
        """The key only from llm.api_key_env: the SDK would otherwise send $OPENAI_API_KEY to whatever server this
        is; without one, no Authorization header at all (as local servers expect), which the SDK allows per
        request."""
        key = os.environ.get(self.api_key_env)
        self._headers = {} if key else {"Authorization": openai.omit}
        return key

    def _connect(self) -> _PacedOpenAI:
        """A synchronous client of its own (the probe's)."""
        key = self._key()
        http = httpx.Client(transport=self._transport, verify=self._tls)  # the SDK sets timeouts
        client = _PacedOpenAI(api_key=key or _KEYLESS, base_url=self.base_url, timeout=self.timeout_s,
                              max_retries=self.max_retries, http_client=cast("httpx2.Client", http))
        client.backoff_s = self.backoff_s
        return client

    def _connect_async(self) -> _PacedAsyncOpenAI:
        key = self._key()
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)  # the slot's one request at a time
        transport = cast("httpx.AsyncBaseTransport | None", self._transport)  # a MockTransport serves both
        http = httpx.AsyncClient(transport=transport, limits=limits, verify=self._tls)
        client = _PacedAsyncOpenAI(api_key=key or _KEYLESS, base_url=self.base_url, timeout=self.timeout_s,
                                   max_retries=self.max_retries, http_client=cast("httpx2.AsyncClient", http))
        client.backoff_s = self.backoff_s
        return client

    def warm_up(self) -> None:
        """Nothing to load: the server holds the model (it is reached on the first call)."""

    def not_ready(self) -> str | None:
        """Asks the server for its model list (one short request, no generation, no retry), on a client of its own:
        a probe does not wait behind the generations in flight."""
        try:
            with self._connect() as client:  # made first: it sets the headers
                client.get("/models", cast_to=httpx.Response, options={
                    "max_retries": 0, "timeout": min(self.timeout_s, _PROBE_TIMEOUT_S), "headers": self._headers})
        except openai.APIConnectionError as exc:
            return f"the LLM server cannot be reached ({type(exc.__cause__ or exc).__name__})"
        except openai.APIStatusError as exc:
            return f"the LLM server answers HTTP {exc.status_code}"
        return None

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        """``agenerate`` for a caller without a loop."""
        return run_sync(self.agenerate(messages, params))

    async def agenerate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        async with self._slot() as client:  # held through the SDK's retries: a retried request keeps its place
            text = await self._ask(client, messages, params)
        completion = _read_completion(text, params.n, self.base_url + "/chat/completions")
        return _plausible_usage(completion, messages, params)

    async def astream(self, messages: list[Message], params: GenerationParams,
                      on_text: Callable[[str], None]) -> RawCompletion:
        """One completion asked with ``stream: true``: each content delta goes to ``on_text`` as it arrives. A server
        that answers with one JSON body instead (it ignores ``stream``) is read as ``agenerate`` reads it."""
        url = self.base_url + "/chat/completions"
        body = _body(self.model, messages, params) | {"stream": True, "stream_options": {"include_usage": True}}
        on_text = heard_safely(on_text)
        async with self._slot() as client:
            reply = await self._post(client, body, params)
            try:
                if not reply.headers.get("content-type", "").startswith("text/event-stream"):
                    completion = _read_completion(await _capped_text(reply, self.max_reply_bytes), 1, url)
                    on_text(completion.texts[0])
                else:
                    completion = await _read_stream(reply, self.max_reply_bytes, url, on_text)
            except httpx.HTTPError as exc:
                raise ServerUnreachableError(f"the LLM server broke off its reply ({type(exc).__name__}); "
                                             "check that it is running") from exc
            finally:
                await reply.aclose()
        return _plausible_usage(completion, messages, params)

    async def _ask(self, client: _PacedAsyncOpenAI, messages: list[Message], params: GenerationParams) -> str:
        """The body of the server's reply, once the SDK got one that is not an error.

        Sent with the SDK's ``post`` (its documented way to make a request it has no method for), not its typed
        ``chat.completions.create``: both get the same retries, timeouts and errors, but the typed one walks every
        parameter through its TypedDict transform: 1.1 ms of CPU per call on the 2-core dev machine against 0.4 ms
        through ``post`` (and 0.2 ms for the plain httpx transport this replaced), and a run with 64 calls in
        flight is short of CPU. The reply is read from its JSON either way (``_read_completion``).
        """
        reply = await self._post(client, _body(self.model, messages, params), params)
        try:
            return await _capped_text(reply, self.max_reply_bytes)
        except httpx.HTTPError as exc:
            raise ServerUnreachableError(f"the LLM server broke off its reply ({type(exc).__name__}); "
                                         "check that it is running") from exc

    async def _post(self, client: _PacedAsyncOpenAI, body: dict[str, object], params: GenerationParams
                    ) -> httpx.Response:
        """The server's reply, its body not read yet (read up to the cap by the caller); a failure as one line."""
        started = time.monotonic()
        try:
            return await client.post("/chat/completions", body=body, cast_to=httpx.Response,
                                     options={"headers": self._headers}, stream=True)
        except openai.APIConnectionError as exc:  # APITimeoutError included
            raise self._unreachable(exc, started) from None
        except openai.APIStatusError as exc:
            raise self._failed(exc, started, schema_sent=params.json_schema is not None) from None

    def _unreachable(self, exc: openai.APIConnectionError, started: float) -> ServerUnreachableError:
        cause = exc.__cause__ or exc
        return ServerUnreachableError(without_credentials(
            f"LLM server at {exc.request.url} unreachable after {_attempts(exc.request, started)} "
            f"({type(cause).__name__}: {cause}; each attempt waits up to llm.timeout_s={self.timeout_s:g} s); "
            "check llm.base_url and that the server is running"))

    @staticmethod
    def _failed(exc: openai.APIStatusError, started: float, *, schema_sent: bool) -> LLMError:
        """A status the SDK retried until it gave up (the server is in trouble), or a refusal of this request (the
        server's words may echo the request's URL: they lose its credentials too)."""
        url, status, text = exc.request.url, exc.status_code, exc.response.text
        if status in (408, 409, 429) or status >= 500:
            told = (f"LLM server at {url} kept failing after {_attempts(exc.request, started)}; "
                    f"it last answered HTTP {status}: {text[:200]}")
            return LLMError(without_credentials(told))
        refusal = without_credentials(f"server at {url} refused the request: HTTP {status}: {text[:300]}")
        if status == 400 and schema_sent and _about_schemas(text):
            return StructuredOutputUnsupported(refusal)
        return LLMError(refusal)


def _body(model: str, messages: list[Message], params: GenerationParams) -> dict[str, object]:
    """The chat-completions request; ``stop`` and ``response_format`` only when there are some."""
    body: dict[str, object] = {"model": model, "messages": [m.model_dump() for m in messages],
                               "temperature": params.temperature, "max_tokens": params.max_tokens, "n": params.n,
                               "seed": params.seed}
    if params.stop:
        body["stop"] = list(params.stop)
    if params.json_schema is not None:
        body["response_format"] = response_format(params.json_schema)
    return body


def _attempts(request: httpx2.Request, started: float) -> str:
    """How many attempts the SDK made (it numbers them in a header of each) and over how long."""
    try:
        made = int(request.headers.get("x-stainless-retry-count", "")) + 1
    except ValueError:
        made = 1
    return f"{made} attempt{'s' if made > 1 else ''} over {time.monotonic() - started:.0f} s"


def _read_completion(text: str, n: int, url: str) -> RawCompletion:
    """The ``n`` texts and token counts of a reply, checked here: servers other than OpenAI's leave fields out or
    fill them oddly, and the SDK's response models take whatever they are given unchecked. An error names ``url``
    without its credentials."""
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise LLMError(without_credentials(f"server at {url} did not return JSON: {text[:200]}")) from exc
    if not isinstance(data, dict):
        raise LLMError(without_credentials(f"server at {url} returned JSON that is not an object: {text[:200]}"))
    try:
        texts = [choice["message"]["content"] or "" for choice in data["choices"]]
        if len(texts) != n or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"not {n} texts")
    except (KeyError, TypeError, ValueError) as exc:
        told = f"server at {url} returned an unexpected response: {str(data)[:300]}"
        raise LLMError(without_credentials(told)) from exc
    usage = data.get("usage")
    return RawCompletion(texts=texts, prompt_tokens=_count(usage, "prompt_tokens"),
                         completion_tokens=_count(usage, "completion_tokens"))


async def _capped_text(reply: httpx.Response, cap: int) -> str:
    """The reply's body, read no further than ``cap`` bytes: a server (or something posing as one) cannot make this
    process hold, cache and show a reply of any size."""
    body = bytearray()
    try:
        async for chunk in reply.aiter_bytes():
            body += chunk
            if len(body) > cap:
                raise LLMError(f"the LLM server's reply is over llm.max_reply_bytes={cap:,} bytes: refused; raise "
                               "the limit if the server is right to send that much")
    finally:
        await reply.aclose()
    return body.decode(reply.encoding or "utf-8", errors="replace")


async def _read_stream(reply: httpx.Response, cap: int, url: str, on_text: Callable[[str], None]) -> RawCompletion:
    """A streamed chat completion's server-sent events: its content deltas (each handed to ``on_text``) joined, and
    the usage its last chunk carries; no more than ``cap`` bytes read, an error event as one line."""
    pieces: list[str] = []
    usage: object = None
    read = 0
    async for line in reply.aiter_lines():
        read += len(line) + 1
        if read > cap:
            raise LLMError(f"the LLM server's reply is over llm.max_reply_bytes={cap:,} bytes: refused")
        data = line.removeprefix("data:").strip() if line.startswith("data:") else ""
        if not data or data == "[DONE]":
            continue
        try:
            chunk: Any = json.loads(data)
        except ValueError as exc:
            raise LLMError(without_credentials(f"server at {url} streamed a line that is not JSON: {data[:200]}")) from exc
        if not isinstance(chunk, dict) or "error" in chunk:
            raise LLMError(without_credentials(f"server at {url} failed while streaming: {str(chunk)[:300]}"))
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            text = (choice.get("delta") or {}).get("content") if isinstance(choice, dict) else None
            if isinstance(text, str) and text:
                pieces.append(text)
                on_text(text)
    return RawCompletion(texts=["".join(pieces)], prompt_tokens=_count(usage, "prompt_tokens"),
                         completion_tokens=_count(usage, "completion_tokens"))


def _plausible_usage(completion: RawCompletion, messages: list[Message], params: GenerationParams) -> RawCompletion:
    """Token counts clipped to what the request could have used, so one server's absurd report (10**30 tokens)
    cannot swamp a run's totals: no more completion tokens than ``max_tokens`` for each of the ``n`` replies, no
    more prompt tokens than the prompt has characters (plus a per-message allowance for the chat template)."""
    most_prompt = sum(len(m.content) for m in messages) + 16 * len(messages)
    most_completion = params.max_tokens * params.n
    if completion.prompt_tokens <= most_prompt and completion.completion_tokens <= most_completion:
        return completion
    log.warning("the LLM server reported %d prompt and %d completion tokens, more than the request allows "
                "(%d and %d): counted as those", completion.prompt_tokens, completion.completion_tokens,
                most_prompt, most_completion)
    return completion.model_copy(update={"prompt_tokens": min(completion.prompt_tokens, most_prompt),
                                         "completion_tokens": min(completion.completion_tokens, most_completion)})


def _about_schemas(text: str) -> bool:
    """A 400 that names the output schema: the server does not take one (others are the request's fault)."""
    lowered = text.lower()
    return any(word in lowered for word in ("response_format", "json_schema", "structured output", "grammar"))


def _count(usage: object, key: str) -> int:
    """A token count from the reply's ``usage``; a usage of the wrong shape counts as absent (0)."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
