import asyncio

import pytest

from tanglerag.errors import QuestionCancelled
from tanglerag.llm.base import GenerationParams, Message
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM, Request
from tanglerag.testing import CannedBackend, canned_llm
from tanglerag.tracking import track

MSGS = [Message(role="system", content="be brief"), Message(role="user", content="capital of France?")]


def test_second_identical_call_is_served_from_cache(llm_factory):
    backend = CannedBackend([("France", "Paris")])
    llm = llm_factory(backend)
    first = llm.complete(MSGS)
    second = llm.complete(MSGS)
    assert first.text == second.text == "Paris"
    assert (first.cached, second.cached) == (False, True)
    assert len(backend.requests) == 1
    # tokens and model time are kept in the cache: a cached call reports the same cost
    assert second.prompt_tokens == first.prompt_tokens > 0
    assert second.seconds == first.seconds > 0


def test_cache_survives_a_new_process(tmp_path):
    backend = CannedBackend([("France", "Paris")])
    LLM(backend, CallCache(tmp_path / "c.sqlite3")).complete(MSGS)
    again = CannedBackend([("France", "Lyon")])
    hit = LLM(again, CallCache(tmp_path / "c.sqlite3")).complete(MSGS)
    assert hit.cached and hit.text == "Paris"
    assert again.requests == []


def test_key_covers_params_model_and_messages(llm_factory):
    backend = CannedBackend([("France", "Paris")])
    llm = llm_factory(backend)
    llm.complete(MSGS)
    llm.complete(MSGS, llm.params(temperature=0.7))
    llm.complete(MSGS, llm.params(stop=["\n"]))
    llm.complete([MSGS[0], Message(role="user", content="capital of France??")])
    backend.model = "canned-v2"
    llm.complete(MSGS)
    assert len(backend.requests) == 5


def test_bypass_per_call_and_globally(llm_factory):
    backend = CannedBackend([("France", "Paris")])
    llm = llm_factory(backend)
    llm.complete(MSGS)
    assert not llm.complete(MSGS, use_cache=False).cached
    llm.use_cache = False
    assert not llm.complete(MSGS).cached
    assert len(backend.requests) == 3


def test_with_the_cache_off_and_no_file_nothing_is_kept(tmp_path):
    """``llm.cache=false``: a cache that is never read holds no copy of each completion (an eval's worth of them)."""
    off = LLM(CannedBackend([("France", "Paris")]), CallCache(None), use_cache=False)
    assert off.complete(MSGS).text == "Paris" and not off.cache._memory
    with_file = LLM(CannedBackend([("France", "Paris")]), CallCache(tmp_path / "c.sqlite3"), use_cache=False)
    with_file.complete(MSGS)  # a file is still refreshed, as before
    assert LLM(CannedBackend(), CallCache(tmp_path / "c.sqlite3")).complete(MSGS).cached


def test_n_samples_and_many_requests_keep_order(llm_factory):
    backend = CannedBackend(responder=lambda msgs: msgs[-1].content.upper())
    llm = llm_factory(backend)
    out = llm.complete_many([Request([Message(role="user", content=w)], llm.params()) for w in ["a", "b", "c"]])
    assert [c.text for c in out] == ["A", "B", "C"]
    sampled = llm.complete(MSGS, llm.params(n=3, temperature=0.8))
    assert len(sampled.texts) == 3


def test_memory_layer_is_a_bounded_lru_in_front_of_the_file(tmp_path):
    from tanglerag.llm.base import RawCompletion
    from tanglerag.llm.cache import CallCache

    cache = CallCache(tmp_path / "c.sqlite3", memory_entries=2)
    for key in "abc":
        cache.put(key, RawCompletion(texts=[key], prompt_tokens=1, completion_tokens=1))
    assert list(cache._memory) == ["b", "c"]  # "a" was least recently used
    assert cache.get("a").texts == ["a"]  # still on disk
    assert list(cache._memory) == ["c", "a"]


def test_a_cancelled_tracker_refuses_the_next_call():
    llm = canned_llm(default="fine")
    with track() as tracker:
        assert llm.complete([Message(role="user", content="one")]).text == "fine"
        tracker.cancel()
        with pytest.raises(QuestionCancelled):
            llm.complete([Message(role="user", content="two")])
    assert len(llm.backend.requests) == 1 and len(tracker.calls) == 1


def test_a_batch_stops_at_the_call_after_its_question_is_cancelled():
    """A batch of per-passage calls is most of a question: cancelling mid-batch skips the calls left."""
    with track() as tracker:
        def reply(messages) -> str:
            if messages[-1].content == "two":
                tracker.cancel()  # the client leaves while the second call runs
            return "fine"

        llm = LLM(CannedBackend(responder=reply), CallCache(None))
        batch = [Request([Message(role="user", content=text)], GenerationParams()) for text in ("one", "two", "three", "four")]
        with pytest.raises(QuestionCancelled, match="after 2 of 4 LLM calls"):
            llm.complete_many(batch)
    assert [messages[-1].content for messages, _ in llm.backend.requests] == ["one", "two"]
    assert len(tracker.calls) == 2  # the calls it made are charged: the abandoned count includes them


def test_the_answers_call_streams_its_tokens_to_a_watcher_and_a_cached_one_comes_whole(tmp_path):
    from tanglerag.tracking import Tracker, streamed_answer

    llm = LLM(CannedBackend(default="sixteen weeks at full pay"), CallCache(tmp_path / "c.sqlite3"))
    heard: list[str] = []
    tracker = Tracker(on_event=lambda e: heard.append(e.data["text"]) if e.type == "token" else None)
    ask = [Message(role="user", content="How long is leave?")]
    with track(tracker):
        llm.complete(ask)  # not the answer's call: nothing streamed
        assert heard == []
        with streamed_answer():
            llm.complete([Message(role="user", content="And parental leave?")])
            assert heard == ["sixteen", " weeks", " at", " full", " pay"]
            heard.clear()
            llm.complete([Message(role="user", content="And parental leave?")])  # from the cache: at once
            assert heard == ["\nsixteen weeks at full pay"]  # and a later call of the answer on a new line
            heard.clear()
            llm.complete_many([Request(ask, llm.params()), Request(ask, llm.params(seed=1))])  # a batch: no answer
    assert heard == []


def test_the_openai_backend_streams_a_servers_deltas(tmp_path):
    from tanglerag.llm.openai_compat import OpenAICompatBackend
    from tanglerag.testing import fake_openai_server

    heard: list[str] = []
    with fake_openai_server(lambda body: "Paris is the capital [1]") as server:
        backend = OpenAICompatBackend(server["base_url"], "m", api_key_env="NO_SUCH_KEY")
        raw = asyncio.run(backend.astream([Message(role="user", content="q")], GenerationParams(), heard.append))
    assert heard == ["Paris", " is", " the", " capital", " [1]"] and raw.texts == ["Paris is the capital [1]"]
    assert raw.completion_tokens == 5 and server["bodies"][0]["stream"] is True


def test_a_server_that_ignores_stream_is_read_whole(tmp_path):
    from tanglerag.llm.openai_compat import OpenAICompatBackend
    from tanglerag.testing import fake_openai_server

    heard: list[str] = []
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"}}]}
    with fake_openai_server(lambda body: "", payload=lambda body: whole) as server:
        backend = OpenAICompatBackend(server["base_url"], "m", api_key_env="NO_SUCH_KEY")
        raw = asyncio.run(backend.astream([Message(role="user", content="q")], GenerationParams(), heard.append))
    assert heard == ["Paris"] and raw.texts == ["Paris"]


def test_a_json_answer_streams_as_its_view_grows_and_each_call_of_an_answer_starts_a_line(tmp_path):
    from tanglerag.stages.generate import cited_answer_decision, cited_answer_messages
    from tanglerag.testing import CannedBackend
    from tanglerag.tracking import Tracker, streamed_answer
    from tanglerag.types import Passage, RetrievedPassage

    backend = CannedBackend(default='{"answer": "Paris", "passages": [1]}', structured=True)
    llm = LLM(backend, CallCache(None), structured="on")
    hits = [RetrievedPassage(passage=Passage(id="p", text="Paris is the capital."), score=1.0, rank=1)]
    decision = cited_answer_decision(cited_answer_messages("Capital?", hits), hits, 32)
    heard: list[str] = []
    tracker = Tracker(on_event=lambda e: heard.append(e.data["text"]) if e.type == "token" else None)
    with track(tracker), streamed_answer():
        llm.decide(decision)
        llm.decide(decision)  # a second call of the answer (cached): on a line of its own
    assert heard == ["Paris", " [1]", "\nParis [1]"]  # the view as it grew, never the JSON; the cached call whole


def test_a_watcher_hears_each_call_of_a_batch_end_before_the_batch_is_charged():
    from tanglerag.service.progress import progress_line
    from tanglerag.tracking import Tracker

    llm = canned_llm(default="yes")
    events = []
    with track(Tracker(on_event=events.append)):
        llm.complete_many([Request([Message(role="user", content=f"claim {i}")], llm.params()) for i in range(3)])
    kinds = [(e.type, e.data.get("done"), e.data.get("planned")) for e in events]
    assert kinds == [("batch", 1, 3), ("batch", 2, 3), ("batch", 3, 3)] + [("llm_call", None, None)] * 3
    assert progress_line(events[1]) == "  2 of 3 model calls of this step done"


def test_a_failing_listener_never_cuts_the_reply_it_listens_to(caplog):
    from tanglerag.tracking import Tracker, streamed_answer

    llm = canned_llm(default="sixteen weeks at full pay")

    def broken(event):
        if event.type == "token":
            raise RuntimeError("the terminal went away")

    with track(Tracker(on_event=broken)), streamed_answer():
        reply = llm.complete([Message(role="user", content="How long is leave?")])
    assert reply.text == "sixteen weeks at full pay"  # whole, and so cached whole
    assert "a listener of the streamed answer failed" in caplog.text
