"""The real ``openai`` SDK talks to the service as to any OpenAI-compatible server."""

import openai
import pytest

from tanglerag.service.auth import ApiKeys
from tests.service.conftest import ADMIN, client_for, make_runtime

TURNS = [{"role": "system", "content": "Be brief."},
         {"role": "user", "content": "Tell me about Europe."},
         {"role": "assistant", "content": "It has many capitals."},
         {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]


@pytest.fixture
def sdk(tmp_path):
    with client_for(make_runtime(tmp_path)) as http:
        yield openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def test_models_are_the_methods(sdk):
    ids = [m.id for m in sdk.models.list()]
    assert "tanglerag/concat" in ids and "tanglerag/corg" in ids and "tanglerag/post-fusion" in ids
    assert ids[0] == "tanglerag/vetted"  # the default first: a client taking the first model gets what ask gives


def test_a_chat_completion_answers_the_last_user_message_with_sources(sdk):
    completion = sdk.chat.completions.create(model="tanglerag/concat", messages=TURNS, temperature=0.3)
    content = completion.choices[0].message.content
    extra = completion.model_extra["tanglerag"]
    first = extra["passages"][0]
    assert content == f"Paris [1]\n\nSources:\n[1] {first['title']} ({first['id']})" and extra["citations"] == [first["id"]]
    assert completion.choices[0].finish_reason == "stop" and completion.model == "tanglerag/concat"
    assert completion.usage.prompt_tokens > 0 and completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens)
    assert extra["ignored_turns"] == 0 and extra["citations"] and extra["trace"]["calls"]
    assert "What is the capital of France?" in extra["trace"]["calls"][0]["messages"][-1]["content"]


def test_a_streamed_chat_completion_gives_the_same_answer_and_usage(sdk):
    whole = sdk.chat.completions.create(model="concat", messages=TURNS).choices[0].message.content
    chunks = list(sdk.chat.completions.create(model="tanglerag/concat", messages=TURNS, stream=True,
                                              stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens > 0


def test_errors_reach_the_sdk_as_its_own_exceptions(sdk, tmp_path):
    with pytest.raises(openai.NotFoundError, match="unknown model 'tanglerag/nope'"):
        sdk.chat.completions.create(model="tanglerag/nope", messages=TURNS)
    with pytest.raises(openai.BadRequestError, match="no user message"):
        sdk.chat.completions.create(model="tanglerag/concat", messages=[{"role": "system", "content": "hi"}])
    keys = ApiKeys.load(env=ADMIN)
    with client_for(make_runtime(tmp_path / "keyed"), keys) as http:
        wrong = openai.OpenAI(base_url="http://testserver/v1", api_key="wrong", http_client=http, max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        right = openai.OpenAI(base_url="http://testserver/v1", api_key=ADMIN, http_client=http, max_retries=0)
        assert right.chat.completions.create(model="tanglerag/concat", messages=TURNS).choices[0].message.content
