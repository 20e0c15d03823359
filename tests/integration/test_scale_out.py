"""Scale-out on the real embedded model: two slots answering two questions at once, and two Ray actors.

No LLM cache: every call reaches llama.cpp. Small budgets (top-2 passages of 40 words, 32 tokens) keep it short.
"""

import functools

import pytest
import ray

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]
BASE = ["llm.cache=false", "retrieval.top_k=2", "methods.passage_words=40", "llm.max_tokens=32", "llm.n_ctx=2048"]


def _answers(predictions):
    return [(p.id, p.answer, p.citations, p.metrics) for p in predictions]


def test_two_slots_answer_two_questions_at_once_as_one_at_a_time_does():
    _, examples = load_dataset("ramdocs-sample", limit=2)
    runs = {}
    for concurrency in (1, 2):
        settings = Settings.load(overrides=[*BASE, "llm.parallel=2", f"eval.concurrency={concurrency}"])
        runs[concurrency] = EvalRunner(Runtime(settings)).run("ramdocs-sample", examples, ["concat"])
    (one, one_predictions), (two, two_predictions) = runs[1], runs[2]
    assert _answers(two_predictions) == _answers(one_predictions)
    assert two.results[0].metrics == one.results[0].metrics and two.n == 2


def test_two_ray_actors_answer_with_the_real_model():
    _, examples = load_dataset("ramdocs-sample", limit=3)
    settings = Settings.load(overrides=[*BASE, "llm.n_threads=1", "eval.engine=ray", "eval.ray_actors=2",
                                        "eval.ray_batch_size=1"])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        report, predictions = EvalRunner(Runtime(settings), make_runtime=functools.partial(Runtime, settings)).run(
            "ramdocs-sample", examples, ["concat"])
    finally:
        ray.shutdown()
    assert report.n == 3 and not report.failed
    assert [p.id for p in predictions] == [ex.id for ex in examples]
    assert all(p.trace.calls and not p.trace.calls[0].cached for p in predictions)  # the model answered each
    assert sum(p.answer != "unknown" for p in predictions) >= 2, [p.answer for p in predictions]
