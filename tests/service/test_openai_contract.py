"""The OpenAI contract, through the real ``openai`` SDK: what we cannot honour is refused with a 400 in OpenAI's error
shape, what we honour (models, JSON answers, stop, legacy completions) answers in the shapes OpenAI's OpenAPI
description gives."""

import json
import time

import openai
import pytest
from pydantic import BaseModel

from tests.service.conftest import client_for, make_runtime

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]

# The keys OpenAI's OpenAPI description (github.com/openai/openai-openapi, openapi.yaml) requires of each object
# we return: Model, CreateChatCompletionResponse and its choice and ChatCompletionResponseMessage,
# CreateCompletionResponse and its choice, and Error.
REQUIRED = {
    "model": {"id", "object", "created", "owned_by"},
    "chat.completion": {"id", "object", "created", "model", "choices"},
    "chat_choice": {"index", "message", "finish_reason", "logprobs"},
    "message": {"role", "content", "refusal"},
    "text_completion": {"id", "object", "created", "model", "choices"},
    "text_choice": {"text", "index", "logprobs", "finish_reason"},
    "error": {"message", "type", "param", "code"},
}


@pytest.fixture
def http(tmp_path):
    with client_for(make_runtime(tmp_path)) as client:
        yield client


@pytest.fixture
def sdk(http):
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def _refused(call, status_error, code, param):
    with pytest.raises(status_error) as caught:
        call()
    error = caught.value.body
    assert set(error) == REQUIRED["error"] and error["code"] == code and error["param"] == param, error
    assert isinstance(error["code"], str) and error["type"] == "invalid_request_error"
    return error


@pytest.mark.parametrize(("extra", "param"), [
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"logprobs": False, "top_logprobs": 3}, "top_logprobs"),
])
def test_what_no_method_can_honour_is_refused_naming_the_parameter(sdk, extra, param):
    _refused(lambda: sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, **extra),
             openai.BadRequestError, "unsupported_parameter", param)


# Open WebUI 0.12's built-in tools as it offers them with every chat message (native function calling, its default)
TOOLS = [{"type": "function", "function": {"name": name, "description": "Open WebUI built-in",
                                           "parameters": {"type": "object", "properties": {}}}}
         for name in ("get_current_timestamp", "search_chats", "search_notes", "query_memory")]


@pytest.mark.parametrize("choice", [openai.NOT_GIVEN, "auto", "none",
                                    {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": TOOLS[:1]}}])
def test_tools_offered_while_the_model_may_choose_are_answered_without_a_call(sdk, choice, caplog):
    caplog.set_level("DEBUG", logger="tanglerag.service.compat")
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, tools=TOOLS, tool_choice=choice)
    choice_out = reply.choices[0]
    assert choice_out.message.content.startswith("Paris [1]") and choice_out.finish_reason == "stop"
    assert not choice_out.message.tool_calls
    assert "4 tool(s) offered, not used" in caplog.text and "get_current_timestamp" in caplog.text
    chunks = list(sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, tools=TOOLS,
                                              tool_choice=choice, stream=True))
    assert not any(c.choices[0].delta.tool_calls for c in chunks if c.choices)
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == choice_out.message.content


def test_the_deprecated_functions_are_answered_without_a_call_too(sdk):
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, function_call="auto",
                                        functions=[tool["function"] for tool in TOOLS])
    assert reply.choices[0].finish_reason == "stop" and not reply.choices[0].message.function_call


@pytest.mark.parametrize(("extra", "param"), [
    ({"tools": TOOLS, "tool_choice": "required"}, "tool_choice"),
    ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "search_notes"}}}, "tool_choice"),
    ({"tools": TOOLS, "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required",
                                                                                  "tools": TOOLS}}}, "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"functions": [TOOLS[0]["function"]], "function_call": {"name": "get_current_timestamp"}}, "function_call"),
])
def test_a_tool_call_required_is_refused_naming_tool_choice(sdk, extra, param):
    error = _refused(lambda: sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, **extra),
                     openai.BadRequestError, "unsupported_value", param)
    assert "no method calls tools" in error["message"]


def test_a_tool_choice_openai_does_not_name_is_an_invalid_value(http):
    r = http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": QUESTION,
                                                "tools": TOOLS, "tool_choice": "sometimes"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_value"
    assert r.json()["error"]["param"] == "tool_choice"


def test_what_is_harmless_is_accepted(sdk):
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, n=1, tool_choice="none",
                                        logprobs=False, temperature=1, max_tokens=50, seed=3, user="someone")
    assert reply.choices[0].message.content.startswith("Paris [1]")


def test_an_invalid_body_is_400_in_openais_shape_naming_the_field(http):
    for body, param, code in [
        ({"model": "tanglerag/concat", "messages": QUESTION, "max_tokens": "ten"}, "max_tokens", "invalid_type"),
        ({"model": "tanglerag/concat"}, "messages", "missing_required_parameter"),
        ({"model": "tanglerag/concat", "messages": QUESTION, "temperature": 7}, "temperature", "invalid_value"),
        ({"model": "tanglerag/concat", "messages": []}, "messages", "invalid_value"),
    ]:
        r = http.post("/v1/chat/completions", json=body)
        assert r.status_code == 400 and r.json()["error"]["param"] == param, r.json()
        assert r.json()["error"]["code"] == code and set(r.json()) == {"error"}  # no FastAPI `detail` array
    r = http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
        {"role": "user", "content": "x" * 3000}]})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("question: longer than")


def test_every_error_on_an_openai_path_has_one_shape(http, tmp_path):
    r = http.post("/v1/embeddings", json={"model": "x", "input": "hi"})  # an endpoint we lack
    assert r.status_code == 404 and set(r.json()["error"]) == REQUIRED["error"]
    assert r.json()["error"]["code"] == "unknown_url"
    r = http.delete("/v1/models")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    with client_for(make_runtime(tmp_path / "small", overrides=["service.max_body_bytes=300"])) as small:
        r = small.post("/v1/completions", json={"model": "tanglerag/concat", "prompt": "x" * 400})
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"


def test_models_have_a_real_created_and_each_can_be_read(sdk):
    listed = sdk.models.list().data
    assert all(time.time() - 3600 < m.created <= time.time() for m in listed)
    one = sdk.models.retrieve("tanglerag/corg")
    assert one.id == "tanglerag/corg" and one.created == listed[0].created and one.owned_by == "tanglerag"
    assert set(one.model_dump()) >= REQUIRED["model"]
    _refused(lambda: sdk.models.retrieve("tanglerag/nope"), openai.NotFoundError, "model_not_found", "model")
    _refused(lambda: sdk.chat.completions.create(model="gpt-4o", messages=QUESTION),
             openai.NotFoundError, "model_not_found", "model")


def test_responses_have_the_keys_openais_description_requires(http):
    chat = http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": QUESTION}).json()
    assert set(chat) >= REQUIRED["chat.completion"] and set(chat["choices"][0]) >= REQUIRED["chat_choice"]
    assert set(chat["choices"][0]["message"]) >= REQUIRED["message"] and chat["created"] > 0
    text = http.post("/v1/completions", json={"model": "tanglerag/concat", "prompt": "capital of France?"}).json()
    assert set(text) >= REQUIRED["text_completion"] and set(text["choices"][0]) >= REQUIRED["text_choice"]
    assert text["object"] == "text_completion"


def test_json_mode_answers_with_the_answer_its_citations_and_conflicts(sdk):
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION,
                                        response_format={"type": "json_object"})
    answer = json.loads(reply.choices[0].message.content)
    first = reply.model_extra["tanglerag"]["passages"][0]["id"]
    assert answer == {"answer": "Paris [1]", "citations": [first], "conflicts": []}
    chunks = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, stream=True,
                                         response_format={"type": "json_object"})
    assert json.loads("".join(c.choices[0].delta.content or "" for c in chunks if c.choices)) == answer


class Cited(BaseModel):
    answer: str
    citations: list[str]


def test_a_json_schema_is_honoured_through_the_sdks_structured_output(sdk):
    parsed = sdk.chat.completions.parse(model="tanglerag/concat", messages=QUESTION, response_format=Cited)
    first = parsed.model_extra["tanglerag"]["passages"][0]["id"]
    assert parsed.choices[0].message.parsed == Cited(answer="Paris [1]", citations=[first])


def test_a_json_schema_asking_for_what_no_answer_has_is_refused(sdk):
    class Scored(BaseModel):
        answer: str
        confidence: float

    error = _refused(lambda: sdk.chat.completions.parse(model="tanglerag/concat", messages=QUESTION,
                                                        response_format=Scored),
                     openai.BadRequestError, "unsupported_value", "response_format.json_schema")
    assert "'confidence'" in error["message"]

    class Wrong(BaseModel):
        answer: list[str]

    _refused(lambda: sdk.chat.completions.parse(model="tanglerag/concat", messages=QUESTION, response_format=Wrong),
             openai.BadRequestError, "unsupported_value", "response_format.json_schema")


def test_stop_cuts_the_reply_before_the_stop_string(sdk):
    reply = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, stop=["\n\nSources"])
    assert reply.choices[0].message.content == "Paris [1]"


def test_a_legacy_completion_answers_its_prompt(sdk):
    completion = sdk.completions.create(model="tanglerag/concat", prompt="What is the capital of France?")
    assert completion.choices[0].text.startswith("Paris [1]") and completion.object == "text_completion"
    assert completion.choices[0].finish_reason == "stop" and completion.usage.prompt_tokens > 0
    streamed = list(sdk.completions.create(model="tanglerag/concat", prompt=["What is the capital of France?"],
                                           stream=True))
    assert "".join(c.choices[0].text for c in streamed) == completion.choices[0].text
    assert streamed[-1].choices[0].finish_reason == "stop"
    _refused(lambda: sdk.completions.create(model="tanglerag/concat", prompt="hi", echo=True),
             openai.BadRequestError, "unsupported_parameter", "echo")
    _refused(lambda: sdk.completions.create(model="tanglerag/concat", prompt=["a", "b"]),
             openai.BadRequestError, "unsupported_parameter", "prompt")
