import asyncio
import json
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tanglerag.errors import LLMError, ServerUnreachableError, StructuredOutputUnsupported
from tanglerag.llm import openai_compat
from tanglerag.llm.base import GenerationParams, RawCompletion
from tanglerag.llm.openai_compat import OpenAICompatBackend
from tanglerag.testing import fake_openai_server
from tanglerag.trace import Message

MSGS = [Message(role="user", content="hi")]


def _ok(text: str = "hello") -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": text}}],
                                     "usage": {"prompt_tokens": 5, "completion_tokens": 1}})


Handler = Callable[[httpx.Request], httpx.Response]


def _backend(handler: Handler, **kw: Any) -> OpenAICompatBackend:
    return OpenAICompatBackend("http://server/v1", "m", transport=httpx.MockTransport(handler),
                               backoff_s=0.0, **kw)


def test_sends_openai_body_and_parses_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test")
    seen: dict[str, Any] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["auth"] = request.headers.get("authorization")
        seen["url"] = str(request.url)
        seen["body"] = json.loads(request.read())
        return _ok("Paris")

    out = _backend(handler, api_key_env="MY_KEY").generate(MSGS, GenerationParams(max_tokens=9, stop=("\n",)))
    assert out.texts == ["Paris"] and out.prompt_tokens == 5
    assert seen["auth"] == "Bearer sk-test"
    assert seen["url"] == "http://server/v1/chat/completions"
    assert seen["body"]["max_tokens"] == 9 and seen["body"]["stop"] == ["\n"]
    assert seen["body"]["messages"] == [{"role": "user", "content": "hi"}]


def test_retries_429_and_5xx_then_succeeds() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(429 if len(calls) == 1 else 503) if len(calls) < 3 else _ok()

    assert _backend(handler, max_retries=3).generate(MSGS, GenerationParams()).texts == ["hello"]
    assert len(calls) == 3


def test_unreachable_server_fails_clearly_after_retries() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("connection refused")

    with pytest.raises(LLMError, match="unreachable after 3 attempts"):
        _backend(handler, max_retries=2).generate(MSGS, GenerationParams())
    assert len(calls) == 3


def test_client_errors_are_not_retried() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(400, text="bad model name")

    with pytest.raises(LLMError, match="bad model name"):
        _backend(handler).generate(MSGS, GenerationParams())
    assert len(calls) == 1


def test_garbage_response_is_an_llm_error() -> None:
    with pytest.raises(LLMError, match="unexpected response"):
        _backend(lambda r: httpx.Response(200, json={"nope": 1})).generate(MSGS, GenerationParams())



def test_backoff_s_sets_the_wait_between_attempts_and_the_sdk_counts_them() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.headers["x-stainless-retry-count"])
        return httpx.Response(503, text="overloaded")

    backend = OpenAICompatBackend("http://server/v1", "m", transport=httpx.MockTransport(handler), max_retries=2,
                                  backoff_s=0.1)
    started = time.monotonic()
    with pytest.raises(LLMError, match="kept failing after 3 attempts over 0 s; it last answered HTTP 503: overloaded"):
        backend.generate(MSGS, GenerationParams())
    waited = time.monotonic() - started
    assert calls == ["0", "1", "2"]
    assert 0.3 <= waited < 0.7  # 0.1 then 0.2 s: not the SDK's own 0.5 then 1 s


def test_retry_after_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "_MAX_RETRY_AFTER_S", 0.2)
    answers = [httpx.Response(429, headers={"Retry-After": "30"}, text="slow down"), _ok()]
    started = time.monotonic()
    assert _backend(lambda r: answers.pop(0), max_retries=1).generate(MSGS, GenerationParams()).texts == ["hello"]
    assert 0.2 <= time.monotonic() - started < 2.0  # waited the cap, not the 30 s asked


def test_a_retry_after_beyond_two_minutes_is_reported_at_once() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(429, headers={"Retry-After": "600"}, text="quota exhausted until tomorrow")

    with pytest.raises(LLMError, match="after 1 attempt over 0 s; it last answered HTTP 429: quota exhausted"):
        _backend(handler, max_retries=3).generate(MSGS, GenerationParams())
    assert len(calls) == 1


def test_a_refusal_fails_at_once_with_the_servers_message() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(401, json={"error": {"message": "Incorrect API key provided"}})

    with pytest.raises(LLMError, match="refused the request: HTTP 401: .*Incorrect API key provided") as caught:
        _backend(handler, max_retries=3).generate(MSGS, GenerationParams())
    assert not isinstance(caught.value, (ServerUnreachableError, StructuredOutputUnsupported))
    assert len(calls) == 1


def test_a_timeout_is_retried_then_reported_as_unreachable() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(ServerUnreachableError, match=r"unreachable after 2 attempts over 0 s \(ReadTimeout: timed out"):
        _backend(handler, max_retries=1).generate(MSGS, GenerationParams())
    assert len(calls) == 2


def test_without_a_key_no_authorization_is_sent_and_openai_api_key_stays_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-openai-only")
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return _ok() if request.method == "POST" else httpx.Response(200, json={"data": []})

    backend = _backend(handler, api_key_env="LOCAL_KEY")
    assert backend.not_ready() is None
    backend.generate(MSGS, GenerationParams())
    assert seen == [None, None]


def test_the_probe_asks_once_and_says_what_went_wrong() -> None:
    calls: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(503, text="loading model")

    assert _backend(handler, max_retries=3).not_ready() == "the LLM server answers HTTP 503"
    assert calls == ["/v1/models"]


async def _at_once(backend: OpenAICompatBackend, count: int) -> list[RawCompletion]:
    return await asyncio.gather(*(backend.agenerate(MSGS, GenerationParams()) for _ in range(count)))


def test_no_more_requests_in_flight_than_the_concurrency() -> None:
    in_flight, most = [0], [0]

    async def handler(request: httpx.Request) -> httpx.Response:
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        await asyncio.sleep(0.05)
        in_flight[0] -= 1
        return _ok()

    replies = asyncio.run(_at_once(_backend(handler, concurrency=2), 6))
    assert [r.texts for r in replies] == [["hello"]] * 6 and most[0] == 2


def test_each_request_in_flight_keeps_a_connection_of_its_own_across_requests() -> None:
    with fake_openai_server(lambda body: "ok") as server:
        backend = OpenAICompatBackend(server["base_url"], "m", concurrency=3)
        with ThreadPoolExecutor(max_workers=6) as pool:
            replies = list(pool.map(lambda _: backend.generate(MSGS, GenerationParams()), range(30)))
    assert [r.texts for r in replies] == [["ok"]] * 30
    assert server["requests"] == 30 and 1 <= len(server["connections"]) <= 3  # kept alive, never more than slots


def test_the_clients_of_all_slots_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    # making a TLS context loads the CA bundle (~50 ms of CPU): 64 slots must not pay it 64 times
    made: list[object] = []
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **kw: made.append(1) or ssl.create_default_context())
    waiting = [0]

    async def handler(request: httpx.Request) -> httpx.Response:
        waiting[0] += 1
        while waiting[0] < 4:  # all four requests in flight at once: four clients
            await asyncio.sleep(0.01)
        return _ok()

    assert len(asyncio.run(asyncio.wait_for(_at_once(_backend(handler, concurrency=4), 4), 5))) == 4
    assert made == [1]


def test_the_readiness_probe_does_not_wait_behind_the_calls_in_flight() -> None:
    release, generating = threading.Event(), threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": []})
        generating.set()
        release.wait(timeout=10)
        return _ok()

    backend = _backend(handler, concurrency=1)
    with ThreadPoolExecutor(max_workers=1) as pool:
        call = pool.submit(backend.generate, MSGS, GenerationParams())
        assert generating.wait(timeout=5)
        started = time.monotonic()
        assert backend.not_ready() is None  # the one slot is busy
        assert time.monotonic() - started < 5
        release.set()
        assert call.result().texts == ["hello"]


def test_the_sdk_hooks_the_backoff_relies_on_still_exist() -> None:
    # _PacedOpenAI overrides one private method of the SDK and calls another: a rename in a new SDK release must
    # fail here, by name, rather than as a silent change of the waits between retries
    import openai

    from tanglerag.llm.openai_compat import _PacedAsyncOpenAI, _PacedOpenAI

    for sdk, ours in ((openai.OpenAI, _PacedOpenAI), (openai.AsyncOpenAI, _PacedAsyncOpenAI)):
        assert callable(getattr(sdk, "_calculate_retry_timeout", None))
        assert callable(getattr(sdk, "_parse_retry_after_header", None))
        assert ours._calculate_retry_timeout is not sdk._calculate_retry_timeout
