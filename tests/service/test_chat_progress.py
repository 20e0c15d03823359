"""A streamed chat answer shows the method's progress where chat UIs show it: reasoning_content deltas by default,
lines before the answer by setting, SSE comments only by setting."""

import openai

from tanglerag.service.progress import progress_line
from tanglerag.tracking import ProgressEvent
from tests.service.conftest import client_for, make_runtime

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def _stream(tmp_path, how: str, **extra):
    with client_for(make_runtime(tmp_path, overrides=[f"service.chat_progress={how}"])) as http:
        sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)
        whole = sdk.chat.completions.create(model="tanglerag/post-fusion", messages=QUESTION, **extra)
        chunks = list(sdk.chat.completions.create(model="tanglerag/post-fusion", messages=QUESTION, stream=True,
                                                  **extra))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    thinking = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    return whole.choices[0].message.content, "".join(d.content or "" for d in deltas), thinking


def test_progress_goes_out_as_reasoning_and_the_content_is_the_answer_alone(tmp_path):
    answer, content, thinking = _stream(tmp_path, "reasoning")
    assert content == answer
    lines = thinking.splitlines()
    assert lines[0] == "retrieve ..." and "post_fusion ..." in lines
    assert sum(line.startswith("  model call: ") for line in lines) == 3  # post-fusion: one call per passage
    assert lines[-1] == "  Post-fusion votes"  # its vote table, a step


def test_progress_as_a_preamble_and_never_before_a_json_answer(tmp_path):
    answer, content, thinking = _stream(tmp_path, "preamble")
    assert content.startswith("_retrieve ..._  \n") and content.endswith("\n" + answer) and thinking == ""
    answer, content, thinking = _stream(tmp_path / "json", "preamble", response_format={"type": "json_object"})
    assert content == answer and content.startswith("{") and thinking


def test_comments_only_leave_the_stream_as_it_was(tmp_path):
    answer, content, thinking = _stream(tmp_path, "comments")
    assert content == answer and thinking == ""


def test_each_event_reads_as_one_short_line():
    assert progress_line(ProgressEvent(type="stage_start", stage="organize")) == "organize ..."
    assert progress_line(ProgressEvent(type="stage_end", stage="organize", data={"seconds": 1.0})) is None
    assert progress_line(ProgressEvent(type="llm_call", stage="organize", data={
        "prompt_tokens": 1925, "completion_tokens": 9, "cached": True})) == "  model call: 1925 prompt tokens, cached"
    assert progress_line(ProgressEvent(type="step", stage="rewrite", data={
        "kind": "followup", "message": "and Germany?", "question": "What about Germany?", "rewritten": True,
        "reason": "opens like a continuation ('and')", "turns": 2})) == (
        "  follow-up read as: What about Germany? (opens like a continuation ('and'))")
    assert progress_line(ProgressEvent(type="step", stage="x", data={"kind": "not-registered"})) == "  not-registered"
