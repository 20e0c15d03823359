"""Issue 69, tokens as they come: a streamed chat or ``/v1/ask`` request gets the answer's tokens as the model
writes them (the canned model streams a word at a time), after the passages, which go out the moment retrieval
ends; a reply that cannot be shown before it is whole (JSON) is sent whole."""

import json

import openai

from tanglerag.testing import CannedBackend
from tests.service.conftest import client_for, make_runtime

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
SPOKEN = CannedBackend([("capital of France", "The capital of France is Paris [1]")], default="unknown")


def _sdk(http):
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def test_a_streamed_chat_answer_comes_token_by_token_then_its_sources(tmp_path):
    with client_for(make_runtime(tmp_path, backend=SPOKEN)) as http:
        chunks = list(_sdk(http).chat.completions.create(model="tanglerag/concat", messages=QUESTION, stream=True))
        whole = _sdk(http).chat.completions.create(model="tanglerag/concat", messages=QUESTION)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces[:7] == ["The", " capital", " of", " France", " is", " Paris", " [1]"]  # as the model wrote them
    assert pieces[7].startswith("\n\nSources:\n[1] ")  # then the rest: the sources its [n] point to
    assert "".join(pieces) == whole.choices[0].message.content


def test_a_json_reply_is_sent_whole(tmp_path):
    with client_for(make_runtime(tmp_path, backend=SPOKEN)) as http:
        chunks = list(_sdk(http).chat.completions.create(model="tanglerag/concat", messages=QUESTION, stream=True,
                                                         response_format={"type": "json_object"}))
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) == 1 and json.loads(pieces[0])["answer"].startswith("The capital of France is Paris")


def _events(text: str) -> list[tuple[str, dict]]:
    blocks = [b for b in text.split("\n\n") if b.startswith("event: ")]
    return [(b.split("\n")[0].removeprefix("event: "), json.loads(b.split("\n")[1].removeprefix("data: ")))
            for b in blocks]


def test_ask_streams_the_passages_when_retrieval_ends_then_the_tokens(tmp_path):
    with client_for(make_runtime(tmp_path, backend=SPOKEN)) as http:
        reply = http.post("/v1/ask?stream=true", json={"question": "What is the capital of France?",
                                                       "method": "concat"})
    events = _events(reply.text)
    kinds = [kind for kind, _ in events]
    first_token = kinds.index("token")
    assert kinds.index("passages") < kinds.index("stage_end") < first_token  # the passages as retrieval ends
    (passages,) = [data["data"]["passages"] for kind, data in events if kind == "passages"]
    answer = events[-1][1]
    assert kinds[-1] == "answer" and [p["id"] for p in passages] == [p["id"] for p in answer["passages"]]
    assert {"id", "text", "score", "title"} <= set(passages[0])  # shown as the answer shows a passage
    tokens = "".join(data["data"]["text"] for kind, data in events if kind == "token")
    assert tokens == answer["answer"] == "The capital of France is Paris [1]"
