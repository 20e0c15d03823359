"""LangChain's ``ChatOpenAI`` (langchain-openai, test extra) uses the service as a chat model: plain, streamed, in a
conversation, and with ``with_structured_output`` (which fails against a server that answers JSON mode with prose)."""

import openai
import pytest
from pydantic import BaseModel

from tanglerag.testing import CannedBackend
from tests.service.conftest import client_for, make_runtime

RULES = [("Standalone question:", "What is the capital of Germany?"),
         ("Question: What is the capital of Germany", "Berlin [1]"), ("Question: What is the capital of France", "Paris [1]")]


class Cited(BaseModel):
    answer: str
    citations: list[str]


@pytest.fixture
def http(tmp_path):
    with client_for(make_runtime(tmp_path, backend=CannedBackend(RULES, default="unknown"))) as client:
        yield client


def _chat(http, **options):
    import langchain_openai  # here, not at collection: 2.4 s that every pytest worker would pay

    return langchain_openai.ChatOpenAI(model="tanglerag/concat", base_url="http://testserver/v1", api_key="unused",
                                       http_client=http, max_retries=0, **options)


def test_a_question_plain_and_streamed(http):
    chat = _chat(http)
    reply = chat.invoke("What is the capital of France?")
    assert reply.content.startswith("Paris [1]") and reply.usage_metadata["input_tokens"] > 0
    assert "".join(chunk.content for chunk in chat.stream("What is the capital of France?")) == reply.content


def test_a_conversation_is_made_standalone(http):
    from langchain_core import messages

    reply = _chat(http).invoke([messages.HumanMessage("What is the capital of France?"), messages.AIMessage("Paris"),
                                messages.HumanMessage("and Germany?")])
    assert reply.content.startswith("Berlin [1]")


def test_structured_output_is_filled(http):
    for method in ("json_schema", "json_mode"):
        answer = _chat(http).with_structured_output(Cited, method=method).invoke("What is the capital of France?")
        assert isinstance(answer, Cited) and answer.answer == "Paris [1]" and len(answer.citations) == 1, method


def test_what_cannot_be_honoured_is_refused(http):
    with pytest.raises(openai.BadRequestError, match="n: only 1 is supported"):
        _chat(http, n=2).invoke("What is the capital of France?")
