
import pytest

from tanglerag.llm.client import LLM
from tanglerag.methods.base import make_method, method_classes
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, canned_llm
from tanglerag.trace import Message
from tanglerag.tracking import Tracker, current_method, current_tracker, record_step, stage, track
from tanglerag.types import Answer, Question
from tests.conftest import as_retrieved, resources


def test_calls_are_charged_to_the_current_stage():
    tracker = Tracker()
    messages = [Message(role="user", content="q")]
    with tracker.stage("organize"):
        tracker.record_call(messages, ["a"], 10, 2, cached=False, model_seconds=1.0)
        tracker.record_call(messages, ["a"], 10, 2, cached=True, model_seconds=4.0)
    with tracker.stage("generate"):
        tracker.record_call(messages, ["b"], 30, 5, cached=False, model_seconds=0.5)
    stages = tracker.usage.stages
    assert (stages["organize"].llm_calls, stages["organize"].cached_calls) == (1, 1)
    assert stages["organize"].prompt_tokens == 20
    assert stages["organize"].model_seconds == 5.0  # a cached call still reports its original model time
    assert stages["generate"].completion_tokens == 5
    assert [c.stage for c in tracker.trace().calls] == ["organize", "organize", "generate"]


def test_nested_stages_do_not_count_wall_time_twice(monkeypatch):
    clock = iter([0.0, 2.0, 5.0, 6.0])  # outer opens, inner opens, inner closes, outer closes
    monkeypatch.setattr("tanglerag.tracking.time.perf_counter", lambda: next(clock))
    tracker = Tracker()
    with tracker.stage("outer"), tracker.stage("inner"):
        pass
    stages = tracker.usage.stages
    assert (stages["outer"].seconds, stages["inner"].seconds) == (3.0, 3.0)  # 2 s before + 1 s after the inner one
    assert tracker.usage.total.seconds == 6.0


def test_binding_ends_with_the_block_and_helpers_are_noops_without_one():
    with track() as tracker:
        assert current_tracker() is tracker
        with stage("s"):
            pass
    assert current_tracker() is None
    with stage("nothing"):
        record_step(object())  # no tracker: nothing is kept, nothing fails
    assert list(tracker.usage.stages) == ["s"]


def test_the_client_charges_every_completion_cached_or_not():
    llm = canned_llm([("capital", "Paris")])
    with track() as tracker, stage("generate"):
        llm.complete([Message(role="user", content="capital of France?")])
        llm.complete([Message(role="user", content="capital of France?")])  # cache hit
    usage = tracker.usage.stages["generate"]
    assert (usage.llm_calls, usage.cached_calls) == (1, 1)
    assert [c.cached for c in tracker.calls] == [False, True] and tracker.calls[1].replies == ["Paris"]
    llm.complete([Message(role="user", content="outside any tracker")])  # charged to nobody, and no error
    assert len(tracker.calls) == 2


@pytest.mark.parametrize("name", sorted(method_classes()))
def test_usage_and_trace_calls_agree_for_every_method(llm_factory, passages, name):
    """Every call in the trace is in the usage and vice versa, per stage, on a first and a cached run."""
    llm = llm_factory(CannedBackend(default="Madrid [1]"))
    method = make_method(name, resources(llm))
    readings = ["Which city is the capital of Spain today?"] if method.reads_gold_interpretations else []
    for _ in range(2):
        answer = method.answer(Question(text="What is the capital of Spain?", id="q", interpretations=readings),
                               as_retrieved(passages))
        calls = answer.trace.calls
        total = answer.usage.total
        assert calls and len(calls) == total.llm_calls + total.cached_calls
        assert sum(c.prompt_tokens for c in calls) == total.prompt_tokens
        assert sum(c.completion_tokens for c in calls) == total.completion_tokens
        for stage_name, usage in answer.usage.stages.items():
            in_stage = [c for c in calls if c.stage == stage_name]
            assert len(in_stage) == usage.llm_calls + usage.cached_calls
            assert sum(not c.cached for c in in_stage) == usage.llm_calls
    assert all(c.cached for c in answer.trace.calls)  # the second run was served by the cache


MADRID = '{"answers": [{"answer": "Madrid", "about": "Spain", "contexts": [3]}]}'


def test_a_method_answers_under_its_own_name_so_its_stages_can_have_their_own_settings(passages):
    """COrg's multi-answer call and concat's answer share the stage ``generate``; by default only COrg's asks for
    JSON (``llm.structured_stages``), and inside a method another delegates to, that method's name holds."""
    cfg = Settings().llm
    assert current_method() is None

    def answer(name: str, stages: dict) -> tuple[Answer, dict[str, set[bool]]]:
        backend = CannedBackend([("under the rule", '{"match": true}'), ("JSON", MADRID)], default="Madrid [1]",
                                structured=True)
        llm = LLM(backend, structured=cfg.structured, structured_stages=stages)
        answer = make_method(name, resources(llm)).answer(Question(text="What is the capital of Spain?"),
                                                          as_retrieved(passages))
        calls = answer.trace.calls
        return answer, {c.stage: {d.constrained for d in calls if d.stage == c.stage} for c in calls}

    corg, constrained = answer("corg", cfg.structured_stages)
    assert constrained["generate"] == {True} and [(p.answer, p.descriptor) for p in corg.parts] == [("Madrid", "Spain")]
    assert answer("concat", cfg.structured_stages)[1] == {"generate": {False}}
    assert answer("cdit", {"cdit": "on"})[1] == {"judge": {True}, "generate": {False}}  # its answerer is concat
    assert current_method() is None  # the name ends with the answer


def test_docstring_examples_run():
    import doctest

    import tanglerag.testing
    import tanglerag.tracking

    for module in (tanglerag.testing, tanglerag.tracking):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__
