"""Open WebUI's background tasks (title, tags, follow-ups, search queries) are answered without retrieval.

The prompts here have the shape of Open WebUI's default task templates (``backend/open_webui/config.py``: a
``### Task:`` heading, the chat between ``<chat_history>`` tags as ``USER:``/``ASSISTANT:`` lines, a JSON reply
format), in our own words."""

import json

import openai
import pytest

from tanglerag.service.background import recognised
from tanglerag.service.schemas import ChatRequest
from tanglerag.testing import CannedBackend
from tests.service.conftest import client_for, make_runtime

CHAT = "USER: Who composed String Quintet No. 2?\nASSISTANT: Johannes Brahms [1]"


def task(output: str, instructions: str = "Sum up the chat as asked.") -> str:
    return (f"### Task:\n{instructions}\n### Guidelines:\n- Keep it short.\n### Output:\nJSON format: {output}\n"
            f"### Chat History:\n<chat_history>\n{CHAT}\n</chat_history>")


TITLE = task('{ "title": "a short title" }')
TAGS = task('{ "tags": ["tag1", "tag2"] }')
FOLLOW_UPS = task('{ "follow_ups": ["Question 1?", "Question 2?"] }')
QUERIES = task('{\n  "queries": ["query1"]\n}')


@pytest.mark.parametrize(("prompt", "key"), [(TITLE, "title"), (TAGS, "tags"), (FOLLOW_UPS, "follow_ups"),
                                             (QUERIES, "queries")])
def test_each_task_is_recognised_by_the_key_its_reply_opens_with(prompt, key):
    assert recognised(ChatRequest(model="tanglerag/corg", messages=[{"role": "user", "content": prompt}])) == key


@pytest.mark.parametrize("messages", [
    [{"role": "user", "content": "### Task: who wrote String Quintet No. 2?"}],  # no chat history: a question
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": TITLE}],
    [{"role": "user", "content": "What does { \"title\": ... } mean in <chat_history>?"}]])
def test_questions_are_not_taken_for_tasks(messages):
    assert recognised(ChatRequest(model="tanglerag/corg", messages=messages)) is None


def _sdk(tmp_path, how: str, backend: CannedBackend):
    runtime = make_runtime(tmp_path, backend=backend, overrides=[f"service.background_tasks={how}"])
    http = client_for(runtime)
    return http, openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def test_the_model_answers_a_task_prompt_in_one_call_without_retrieval(tmp_path):
    backend = CannedBackend([("### Task:", '{"title": "String Quintet Composers"}')], default="unknown")
    http, sdk = _sdk(tmp_path, "model", backend)
    with http:
        reply = sdk.chat.completions.create(model="tanglerag/corg", messages=[{"role": "user", "content": TITLE}])
        assert json.loads(reply.choices[0].message.content) == {"title": "String Quintet Composers"}
        assert reply.model_extra["tanglerag"] is None and reply.usage.prompt_tokens > 0
        assert [r[0][-1].content for r in backend.requests] == [TITLE]  # corg would have made several calls
        streamed = list(sdk.chat.completions.create(model="tanglerag/corg", stream=True,
                                                    messages=[{"role": "user", "content": TITLE}]))
        assert "".join(c.choices[0].delta.content or "" for c in streamed) == reply.choices[0].message.content
        assert len(backend.requests) == 1  # the second was cached


def test_plain_answers_without_any_model_call(tmp_path):
    backend = CannedBackend([], default="unknown")
    http, sdk = _sdk(tmp_path, "plain", backend)
    with http:
        def ask(prompt):
            return json.loads(sdk.chat.completions.create(
                model="tanglerag/concat", messages=[{"role": "user", "content": prompt}]).choices[0].message.content)
        assert ask(TITLE) == {"title": "Who composed String Quintet No"}
        assert ask(TAGS) == {"tags": ["General"]} and ask(FOLLOW_UPS) == {"follow_ups": []}
        assert ask(QUERIES) == {"queries": []} and backend.requests == []


def test_refuse_answers_400_at_once(tmp_path):
    backend = CannedBackend([], default="unknown")
    http, sdk = _sdk(tmp_path, "refuse", backend)
    with http, pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="tanglerag/corg", messages=[{"role": "user", "content": TAGS}])
    assert caught.value.body["code"] == "background_task_refused" and "(tags)" in caught.value.body["message"]
    assert backend.requests == []
