import json

import httpx
import pytest

from tanglerag.errors import LLMError
from tanglerag.llm.base import GenerationParams, Message
from tanglerag.llm.openai_compat import OpenAICompatBackend

MSGS = [Message(role="user", content="hi")]


def _ok(text: str = "hello") -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": text}}],
                                     "usage": {"prompt_tokens": 5, "completion_tokens": 1}})


def _backend(handler, **kw) -> OpenAICompatBackend:
    return OpenAICompatBackend("http://server/v1", "m", transport=httpx.MockTransport(handler),
                               backoff_s=0.0, **kw)


def test_sends_openai_body_and_parses_usage(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test")
    seen = {}

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


def test_retries_429_and_5xx_then_succeeds():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(429 if len(calls) == 1 else 503) if len(calls) < 3 else _ok()

    assert _backend(handler, max_retries=3).generate(MSGS, GenerationParams()).texts == ["hello"]
    assert len(calls) == 3


def test_unreachable_server_fails_clearly_after_retries():
    calls = []

    def handler(request):
        calls.append(1)
        raise httpx.ConnectError("connection refused")

    with pytest.raises(LLMError, match="unreachable after 3 attempts"):
        _backend(handler, max_retries=2).generate(MSGS, GenerationParams())
    assert len(calls) == 3


def test_client_errors_are_not_retried():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(400, text="bad model name")

    with pytest.raises(LLMError, match="bad model name"):
        _backend(handler).generate(MSGS, GenerationParams())
    assert len(calls) == 1


def test_garbage_response_is_an_llm_error():
    with pytest.raises(LLMError, match="unexpected response"):
        _backend(lambda r: httpx.Response(200, json={"nope": 1})).generate(MSGS, GenerationParams())

