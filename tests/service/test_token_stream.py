"""Issue 69, tokens as they come: a streamed chat or ``/v1/ask`` request gets the answer's tokens as the model
writes them (the canned model streams a word at a time), after the passages, which go out the moment retrieval
ends; a reply that cannot be shown before it is whole (JSON) is sent whole."""

import json

import openai

from tanglerag.index.passage_index import store_passages
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage
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


RELEASES = [  # b-tessera-upload-1: the model answers from the README first; the release notes changed its value
    {"id": "readme", "title": "Tessera README", "text": "Tessera limits: the maximum upload size is 25 MB per file."},
    {"id": "changes", "title": "CHANGELOG", "text": "## 3.2.0 - 2024-09-18\n- Maximum upload size raised to 100 MB "
                                                    "per file (was 25 MB).", "path": "CHANGELOG.md"},
]


def test_an_answer_asked_again_streams_why_between_the_two_and_its_rest_once(tmp_path):
    runtime = make_runtime(tmp_path, with_index=False, backend=CannedBackend(responder=lambda messages: (
        "100 MB [1]" if "25 MB per file" not in messages[-1].content else "25 MB [2]")))
    passages = [Passage(id=d["id"], title=d["title"], text=d["text"], metadata={"path": d.get("path", d["id"])})
                for d in RELEASES]
    store_passages(tmp_path / "index", passages, HashEmbedder(), Settings().index)
    question = [{"role": "user", "content": "What is the maximum upload size per file?"}]
    with client_for(runtime) as http:
        chunks = list(_sdk(http).chat.completions.create(model="tanglerag/vetted", messages=question, stream=True))
        whole = _sdk(http).chat.completions.create(model="tanglerag/vetted", messages=question)
    streamed = "".join(c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content)
    content = whole.choices[0].message.content
    assert content.startswith("100 MB [1]\nSet aside: 25 MB: a README beside release notes that change it")
    assert streamed == ("25 MB [2]\n(asked again without Tessera README: a README beside release notes that change "
                        "it)\n"
                        + content)  # the final answer and its sources once, not the whole reply again


TRAIL = [  # g-cragmoor-tramway-trail-2: "unknown" over the whole passages, the year over the sentence alone
    {"id": "sign", "title": "Cragmoor Tramway Trail", "text": "Over a million tons of Cragmoor stone came down to "
     "the wharf. The tramway was closed in 1938 and the rails lifted for scrap. Keep dogs on leads near livestock."},
]


def test_an_unknown_asked_again_over_a_sentence_streams_why_between_the_two(tmp_path):
    runtime = make_runtime(tmp_path, with_index=False, backend=CannedBackend(responder=lambda messages: (
        "unknown" if "Keep dogs" in messages[-1].content else "1938 [1]")))
    store_passages(tmp_path / "index", [Passage(id=d["id"], title=d["title"], text=d["text"], metadata={})
                                        for d in TRAIL], HashEmbedder(), Settings().index)
    question = [{"role": "user", "content": "When did the Cragmoor tramway close?"}]
    with client_for(runtime) as http:
        chunks = list(_sdk(http).chat.completions.create(model="tanglerag/vetted", messages=question, stream=True))
    streamed = "".join(c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content)
    assert streamed.startswith("unknown\n(asked again over the sentences of Cragmoor Tramway Trail that answer in "
                               "the question's words)\n1938 [1]\n")
    assert streamed.endswith("[1] Cragmoor Tramway Trail (sign)")  # the second answer's sources


def test_an_assembled_answer_streams_its_tokens_as_progress_and_the_answer_once(tmp_path):
    """COrg writes each answer with its descriptor and marks after its calls ("Paris (the city) [1]"), not as the
    model wrote it ("Paris - the city"): its tokens go out as reasoning, so the content is the answer once."""
    spoken = CannedBackend([("capital of France", "Paris - the capital city [1]")], default="unknown")
    with client_for(make_runtime(tmp_path, backend=spoken)) as http:
        chunks = list(_sdk(http).chat.completions.create(model="tanglerag/corg", messages=QUESTION, stream=True))
        whole = _sdk(http).chat.completions.create(model="tanglerag/corg", messages=QUESTION)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    content = [d.content for d in deltas if d.content]
    thinking = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    assert content == [whole.choices[0].message.content]  # once, whole
    assert content[0].startswith("Paris") and "Paris - the capital city" in thinking  # the model's own words
