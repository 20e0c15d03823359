"""A follow-up is made standalone by one cached model call, only when it reads as depending on earlier turns."""

import pytest

from tanglerag.aio import run_sync
from tanglerag.config import ConversationConfig
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.stages.followup import FollowUpStep, Turn, depends_on_history, read_turns, standalone
from tanglerag.testing import CannedBackend
from tanglerag.tracking import Tracker, track


def _standalone(*args) -> str:
    return run_sync(standalone(*args))

HISTORY = [Turn(role="user", content="Who composed String Quintet No. 2?"),
           Turn(role="assistant", content="Wolfgang Amadeus Mozart (String Quintet No. 2 (Mozart)) [1]\n\n"
                                          "Sources:\n[1] String Quintet No. 2 (Mozart) (ramdocs-10-3)")]
REWRITTEN = "Who composed Brahms's String Quintet No. 2?"


@pytest.mark.parametrize("message", [
    "and the other one?", "And Brahms?", "What about the second one?", "Who else wrote one?", "When was it written?",
    "Where did he live?", "Is that the same piece?", "why?", "in 1890?", "But who published those?"])
def test_follow_ups_are_taken_to_depend_on_the_history(message):
    assert depends_on_history(message) is not None


@pytest.mark.parametrize("message", [
    "Who composed String Quintet No. 2?", "What is the capital of France?", "When did Brahms write his Op. 111?",
    "Android origin country of manufacture", "Which river flows through Vienna?"])
def test_standalone_questions_are_left_alone(message):
    assert depends_on_history(message) is None


def _llm(reply: str = REWRITTEN) -> tuple[LLM, CannedBackend]:
    backend = CannedBackend([("Standalone question:", reply)], default="unknown")
    return LLM(backend, CallCache(None)), backend


def test_a_follow_up_is_rewritten_once_and_the_rewrite_is_cached_and_traced():
    llm, backend = _llm()
    with track(Tracker()) as tracker:
        question = _standalone(llm, HISTORY, "and the other one?", ConversationConfig())
    assert question == REWRITTEN and len(backend.requests) == 1
    prompt = backend.requests[0][0][-1].content
    assert "User: Who composed String Quintet No. 2?" in prompt and "Sources:" not in prompt
    assert prompt.endswith("Last message: and the other one?\n\nStandalone question:")
    [call] = tracker.trace().calls
    [step] = tracker.trace().steps
    assert call.stage == "rewrite" and not call.cached
    assert isinstance(step, FollowUpStep) and step.rewritten and step.question == REWRITTEN and step.turns == 2
    assert step.reason == "opens like a continuation ('and')" and REWRITTEN in (step.headline() or "")
    with track(Tracker()) as again:
        assert _standalone(llm, HISTORY, "and the other one?", ConversationConfig()) == REWRITTEN
    assert len(backend.requests) == 1 and again.trace().calls[0].cached


def test_a_standalone_message_costs_no_call_and_says_why():
    llm, backend = _llm()
    with track(Tracker()) as tracker:
        assert _standalone(llm, HISTORY, "What is the capital of France?", ConversationConfig()) == (
            "What is the capital of France?")
    assert backend.requests == [] and tracker.trace().steps[0].reason == "reads as standalone"
    assert tracker.trace().steps[0].headline() is None


def test_settings_force_or_forbid_the_rewrite_and_a_bad_reply_keeps_the_message():
    llm, backend = _llm()
    assert _standalone(llm, HISTORY, "and the other one?", ConversationConfig(rewrite="never")) == "and the other one?"
    assert backend.requests == []
    assert _standalone(llm, HISTORY, "What is the capital?", ConversationConfig(rewrite="always")) == REWRITTEN
    assert len(backend.requests) == 1
    quoted, _ = _llm('Standalone question: "Who wrote it?"\nmore')
    assert _standalone(quoted, HISTORY, "who wrote it?", ConversationConfig()) == "Who wrote it?"
    empty, _ = _llm("   ")
    with track(Tracker()) as tracker:
        assert _standalone(empty, HISTORY, "and the other one?", ConversationConfig()) == "and the other one?"
    assert "the rewrite was empty" in tracker.trace().steps[0].reason


def test_only_the_last_turns_are_read_each_cut_to_its_first_words():
    llm, backend = _llm()
    long = [Turn(role="user", content=f"question {n} " + "word " * 200) for n in range(10)]
    _standalone(llm, long, "and then?", ConversationConfig(max_turns=3, turn_words=10))
    prompt = backend.requests[0][0][-1].content
    assert "question 6" not in prompt and "question 7" in prompt and "question 9" in prompt
    assert "User: question 9 word word word word word word word word ..." in prompt


def test_chat_messages_become_turns():
    turns = read_turns([{"role": "system", "content": "Be brief."}, {"role": "user", "content": [
        {"type": "text", "text": "Who?"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": None}, {"role": "assistant", "content": "x" * 30_000}])
    assert [t.role for t in turns] == ["user", "assistant"] and turns[0].content == "Who?"
    assert len(turns[1].content) == 20_000
    with pytest.raises(ValueError, match="message 1"):
        read_turns([{"content": "no role"}])
