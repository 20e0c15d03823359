"""Questions answered several at a time give the same report and predictions as one at a time."""

import re
import threading
import time

import pytest

from tanglerag.datasets.registry import load_dataset
from tanglerag.errors import LLMError
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm

METHODS = ["concat", "post-fusion"]


class SlowModel:
    """Replies after a short wait, naming the question it was asked, and counts the calls in flight at once."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.in_flight = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, messages) -> str:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(0.01)
            prompt = messages[-1].content
            if self.fail_on and self.fail_on in prompt:
                raise LLMError("the prompt does not fit the model's context window")
            question = re.search(r"(What|Who|Which|When|Where|How)[^?\n]*\?", prompt)
            return f"{question.group(0) if question else 'unknown'} [1]"
        finally:
            with self.lock:
                self.in_flight -= 1


def _run(concurrency: int, model: SlowModel, n: int = 8, **overrides):
    _, examples = load_dataset("ramdocs-sample", limit=n)
    sets = ["retrieval.top_k=3", f"eval.concurrency={concurrency}", *(f"{k}={v}" for k, v in overrides.items())]
    runtime = Runtime(Settings.load(overrides=sets), llm=canned_llm(responder=model, concurrency=concurrency), embedder=HashEmbedder())
    return EvalRunner(runtime).run("ramdocs-sample", examples, METHODS)


def _comparable(predictions):
    return [(p.id, p.method, p.answer, p.citations, p.passage_ids, p.metrics,
             [(c.stage, c.messages, c.replies) for c in p.trace.calls]) for p in predictions]


def test_four_at_once_equals_one_at_a_time():
    one_model, four_model = SlowModel(), SlowModel()
    one, one_predictions = _run(1, one_model)
    four, four_predictions = _run(4, four_model)
    assert one_model.most == 1 and four_model.most > 1  # the second run really had questions in flight together
    assert _comparable(four_predictions) == _comparable(one_predictions)
    assert [r.metrics for r in four.results] == [r.metrics for r in one.results] and four.n == 8
    # predictions in dataset order, method by method, and each trace holds its own question's calls only
    assert [p.id for p in four_predictions[:8]] == [f"ramdocs-{i:04d}" for i in range(8)]
    for prediction in four_predictions:
        assert prediction.trace.calls and all(prediction.question in c.messages[-1].content
                                              for c in prediction.trace.calls)


def test_a_failing_question_is_recorded_and_the_run_goes_on():
    _, examples = load_dataset("ramdocs-sample", limit=4)
    report, predictions = _run(2, SlowModel(fail_on=examples[2].question), n=4)
    assert report.n == 3 and [f.id for f in report.failed] == [examples[2].id]
    assert "context window" in report.failed[0].error
    assert examples[2].id not in {p.id for p in predictions} and len(predictions) == 3 * len(METHODS)
    with pytest.raises(LLMError, match=f"question {examples[2].id} failed \\(--fail-fast\\)"):
        _run(2, SlowModel(fail_on=examples[2].question), n=4, **{"eval.fail_fast": "true"})


def test_methods_that_remember_earlier_questions_run_one_at_a_time(caplog):
    runtime = Runtime(Settings.load(overrides=["eval.concurrency=4"]), llm=canned_llm(responder=SlowModel()),
                      embedder=HashEmbedder())
    runner = EvalRunner(runtime)
    assert runner.concurrency(["concat"]) == 4 and runner.concurrency(["concat", "cdit"]) == 1
    assert "cdit remember(s) earlier questions" in caplog.text


def _recording_run(monkeypatch, concurrency: int, wait_for_build_of: int | None = None):
    """Events in the order they happened: ("build", i) as question i's passages are built, ("answered", i) as the
    model answers it. With ``wait_for_build_of``, the model holds every question before that one until that one's
    passages are built (60 s at most), and says whether they were."""
    from tanglerag.eval.passages import PassageBuilder

    _, examples = load_dataset("ramdocs-sample", limit=6)
    number = {ex.id: i for i, ex in enumerate(examples)}
    events, lock, built = [], threading.Lock(), threading.Event()
    real_build = PassageBuilder.build

    def build(self, example, k):
        with lock:
            events.append(("build", number[example.id]))
        if number[example.id] == wait_for_build_of:
            built.set()
        return real_build(self, example, k)

    def reply(messages) -> str:
        i = next(i for i, ex in enumerate(examples) if ex.question in messages[-1].content)
        if wait_for_build_of is not None and i < wait_for_build_of:
            was_built = built.wait(60)  # outside the lock: the build takes it before it sets ``built``
            with lock:
                events.append(("waited", i, was_built))
        with lock:
            events.append(("answered", i))
        return "3,559 people [1]"

    monkeypatch.setattr(PassageBuilder, "build", build)
    runtime = Runtime(Settings.load(overrides=["retrieval.top_k=2", f"eval.concurrency={concurrency}"]),
                      llm=canned_llm(responder=reply, concurrency=concurrency), embedder=HashEmbedder())
    report, _ = EvalRunner(runtime).run("ramdocs-sample", examples, ["concat"])
    assert report.n == 6
    return events


def test_a_question_s_passages_are_built_while_the_questions_before_it_wait_on_the_model(monkeypatch):
    # two in flight: question 2 starts only once 0 or 1 is answered, yet its passages are built while both wait
    events = _recording_run(monkeypatch, 2, wait_for_build_of=2)
    assert sorted(e for e in events if e[0] == "waited") == [("waited", 0, True), ("waited", 1, True)]


def test_one_at_a_time_each_question_s_passages_are_built_after_the_one_before_it_was_answered(monkeypatch):
    # what a question's method changes (CDIT trims the index) is seen by the next question's retrieval
    events = _recording_run(monkeypatch, 1)
    assert events == [e for i in range(6) for e in (("build", i), ("answered", i))]
