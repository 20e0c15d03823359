"""``conflicts.report``: any method's answer gets the ledger's conflict report on the passages it used, charged to
one ``conflicts`` stage, without its answer changing; a method that reports itself is not analysed twice."""

import pytest

from tanglerag.conflicts import ConflictStep
from tanglerag.errors import ConfigError, QuestionCancelled
from tanglerag.methods.base import make_method
from tanglerag.settings import Settings
from tanglerag.tracking import Tracker, track
from tanglerag.types import Question
from tests.conflicting import JORDAN, QUESTION, conflicting_backend
from tests.conftest import as_retrieved, resources


def answer(llm_factory, method="concat", *overrides, backend=None):
    llm = llm_factory(backend or conflicting_backend(), persistent=False)
    made = make_method(method, resources(llm, Settings.load(overrides=list(overrides))))
    return made.answer(Question(text=QUESTION), as_retrieved(JORDAN))


def test_off_by_default_and_on_it_reports_without_changing_the_answer(llm_factory):
    plain = answer(llm_factory)
    assert plain.trace.find(ConflictStep) is None and list(plain.usage.stages) == ["generate"]
    reported = answer(llm_factory, "concat", "conflicts.report=true")
    assert (reported.text, reported.citations, reported.parts) == (plain.text, plain.citations, plain.parts)
    step = reported.trace.find(ConflictStep)
    assert step is not None and step.overall == "misinformation" and step.reports[0].rule == "witnesses 2 vs 1"
    assert {s.answer: s.verdict for s in step.reports[0].sides} == {"1963": "kept", "1998": "rejected"}


def test_the_reports_calls_are_one_stage_apart_from_the_methods(llm_factory):
    reported = answer(llm_factory, "concat", "conflicts.report=true")
    assert {name: s.llm_calls for name, s in reported.usage.stages.items()} == {"generate": 1, "conflicts": 3}
    assert [c.stage for c in reported.trace.calls] == ["generate", "conflicts", "conflicts", "conflicts"]
    assert reported.usage.totals()["llm_calls"] == 4
    assert [type(s) for s in reported.trace.steps] == [ConflictStep]  # the reporter's answer is not kept


def test_a_method_that_reports_itself_is_not_analysed_twice(llm_factory):
    ledger = answer(llm_factory, "ledger", "conflicts.report=true")
    assert len([s for s in ledger.trace.steps if isinstance(s, ConflictStep)]) == 1
    assert "conflicts" not in ledger.usage.stages and ledger.usage.stages["claims"].llm_calls == 3


def test_no_passages_no_report(llm_factory):
    llm = llm_factory(conflicting_backend(), persistent=False)
    made = make_method("concat", resources(llm, Settings.load(overrides=["conflicts.report=true"])))
    empty = made.answer(Question(text=QUESTION), [])
    assert empty.trace.find(ConflictStep) is None and "conflicts" not in empty.usage.stages


def test_a_cancelled_question_stops_the_report_too(llm_factory):
    tracker = Tracker()
    backend = conflicting_backend()
    answered = backend.responder

    def cancel_after_the_answer(messages):
        tracker.cancel()  # the client leaves once the method has answered
        return answered(messages)

    backend.responder = cancel_after_the_answer
    llm = llm_factory(backend, persistent=False)
    made = make_method("concat", resources(llm, Settings.load(overrides=["conflicts.report=true"])))
    with track(tracker), pytest.raises(QuestionCancelled):
        made.answer(Question(text=QUESTION), as_retrieved(JORDAN))
    assert len(backend.requests) == 1  # no claim call was made


def test_the_setting_is_a_checked_bool():
    assert Settings.load(overrides=["conflicts.report=true"]).conflicts.report is True
    with pytest.raises(ConfigError, match="conflicts.report"):
        Settings.load(overrides=["conflicts.report=maybe"])
