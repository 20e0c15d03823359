"""A follow-up in a chat (or /v1/ask's history) is made standalone before retrieval, with the rewrite in the trace."""

import json

import openai
import pytest

from tanglerag.testing import CannedBackend
from tests.service.conftest import client_for, make_runtime

RULES = [("Standalone question:", "What is the capital of Germany?"), ("capital of Germany", "Berlin [1]"),
         ("capital of France", "Paris [1]")]
TURNS = [{"role": "system", "content": "Be brief."},
         {"role": "user", "content": "What is the capital of France?"},
         {"role": "assistant", "content": "Paris [1]\n\nSources:\n[1] Paris (p1)"},
         {"role": "user", "content": "and Germany?"}]


@pytest.fixture
def backend():
    return CannedBackend(RULES, default="unknown")


@pytest.fixture
def http(tmp_path, backend):
    with client_for(make_runtime(tmp_path, backend=backend)) as client:
        yield client


@pytest.fixture
def sdk(http):
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def _followup(extra):
    return next(step for step in extra["trace"]["steps"] if step["kind"] == "followup")


def test_a_follow_up_is_answered_as_the_standalone_question_it_means(sdk, backend):
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=TURNS)
    extra = reply.model_extra["tanglerag"]
    assert reply.choices[0].message.content.startswith("Berlin [1]")
    assert extra["question"] == "What is the capital of Germany?" and extra["ignored_turns"] == 0
    step = _followup(extra)
    assert step["message"] == "and Germany?" and step["rewritten"] and step["turns"] == 2
    assert [call["stage"] for call in extra["trace"]["calls"]] == ["rewrite", "generate"]
    assert "Be brief" not in extra["trace"]["calls"][0]["messages"][-1]["content"]  # system messages are not turns
    assert extra["usage_by_stage"]["rewrite"]["llm_calls"] == 1
    streamed = list(sdk.chat.completions.create(model="tanglerag/concat", messages=TURNS, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == (
        reply.choices[0].message.content)
    assert sum("Standalone question:" in r[0][-1].content for r in backend.requests) == 1  # the second was cached


def test_a_message_that_stands_alone_costs_no_rewrite(sdk, backend):
    turns = [*TURNS[:-1], {"role": "user", "content": "What is the capital of Germany?"}]
    extra = sdk.chat.completions.create(model="tanglerag/concat", messages=turns).model_extra["tanglerag"]
    assert not _followup(extra)["rewritten"] and [c["stage"] for c in extra["trace"]["calls"]] == ["generate"]


def test_ask_takes_a_history_too(http):
    history = [{"role": "user", "content": "What is the capital of France?"}, {"role": "assistant", "content": "Paris"}]
    body = http.post("/v1/ask", json={"question": "and Germany?", "history": history}).json()
    assert body["answer"] == "Berlin [1]" and _followup(body)["question"] == "What is the capital of Germany?"
    bad = http.post("/v1/ask", json={"question": "and Germany?", "history": [{"role": "system", "content": "x"}]})
    assert bad.status_code == 422 and bad.json()["error"].startswith("history.0.role:")


def test_turns_beyond_the_window_are_counted_as_unread(tmp_path, backend):
    runtime = make_runtime(tmp_path, backend=backend, overrides=["conversation.max_turns=1"])
    with client_for(runtime) as http:
        reply = http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": TURNS}).json()
    assert reply["tanglerag"]["ignored_turns"] == 1 and _followup(reply["tanglerag"])["turns"] == 1
    assert json.loads(json.dumps(reply))["choices"][0]["message"]["content"].startswith("Berlin")
