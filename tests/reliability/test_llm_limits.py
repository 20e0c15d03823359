"""Issue 49, case 13: an OpenAI-compatible server's reply is read no further than ``llm.max_reply_bytes``, and an
absurd token count it reports is clipped to what the request allows (and logged), never added to the totals."""

import logging

import pytest

from tanglerag.errors import LLMError
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.openai_compat import OpenAICompatBackend
from tanglerag.testing import fake_openai_server
from tanglerag.trace import Message

ASKED = [Message(role="user", content="What is the capital of France?")]


def _backend(url: str, **kwargs: int) -> OpenAICompatBackend:
    return OpenAICompatBackend(url, "m", max_retries=0, **kwargs)


def test_a_reply_over_the_limit_is_refused_without_reading_it_all():
    refused = pytest.raises(LLMError, match=r"over llm.max_reply_bytes=100,000 bytes")
    with fake_openai_server(lambda body: "Paris " * 2_000_000) as server, refused:  # a 12 MB reply
        _backend(server["base_url"], max_reply_bytes=100_000).generate(ASKED, GenerationParams(max_tokens=16))


def test_a_reply_under_the_limit_is_read_whole():
    with fake_openai_server(lambda body: "Paris") as server:
        got = _backend(server["base_url"], max_reply_bytes=100_000).generate(ASKED, GenerationParams(max_tokens=16))
    assert got.texts == ["Paris"]


@pytest.mark.parametrize("usage", [{"prompt_tokens": 10**30, "completion_tokens": 10**30},
                                   {"prompt_tokens": 3, "completion_tokens": 1e30}])
def test_an_absurd_usage_is_clipped_and_logged(usage, caplog):
    def payload(body: dict) -> dict:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"}}], "usage": usage}

    with fake_openai_server(lambda body: "", payload=payload) as server, caplog.at_level(logging.WARNING):
        got = _backend(server["base_url"]).generate(ASKED, GenerationParams(max_tokens=16))
    prompt_chars = len(ASKED[0].content)
    assert got.completion_tokens <= 16 and got.prompt_tokens <= prompt_chars + 16
    if usage["prompt_tokens"] > 10:
        assert "more than the request allows" in caplog.text


def test_a_plausible_usage_is_kept_as_reported():
    with fake_openai_server(lambda body: "Paris is the capital") as server:
        got = _backend(server["base_url"]).generate(ASKED, GenerationParams(max_tokens=16))
    assert (got.prompt_tokens, got.completion_tokens) == (11, 4)
