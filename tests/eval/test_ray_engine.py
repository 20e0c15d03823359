"""The Ray engine: actors on a local Ray instance give the local engine's results, even when one is killed."""

import functools
import os
import signal
import sys
from pathlib import Path

import pytest
import ray
import ray.cloudpickle

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.runner import EvalRunner
from tanglerag.settings import Settings
from tanglerag.testing import canned_runtime

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # actors get this module's helpers by value
pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.usefixtures("local_ray")]  # one Ray instance (conftest)
SETS = ["retrieval.top_k=2", "eval.engine=ray", "eval.ray_actors=2", "eval.ray_batch_size=2"]


def _answer(messages) -> str:
    return messages[-1].content.split("Question:")[-1].strip()[:40] + " [1]"


class DiesOnce:
    """Answers like ``_answer``, but the first actor to see ``trigger`` kills its own process (marked on disk)."""

    def __init__(self, trigger: str, marker: Path) -> None:
        self.trigger, self.marker = trigger, marker

    def __call__(self, messages) -> str:
        if self.trigger in messages[-1].content and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return _answer(messages)


def _run(settings: Settings, responder, examples):
    make = functools.partial(canned_runtime, settings, responder=responder)
    return EvalRunner(make(), make_runtime=make).run("ramdocs-sample", examples, ["concat", "post-fusion"])


def _comparable(predictions):
    return [(p.id, p.method, p.answer, p.citations, p.metrics, [c.messages for c in p.trace.calls])
            for p in predictions]


def test_ray_actors_give_the_local_engines_results_even_when_one_is_killed(tmp_path):
    """One Ray run (actors start in seconds each, so one run covers both): an actor dies on question 4, is
    restarted, and every question comes back once with the local engine's answers, traces and scores."""
    _, examples = load_dataset("ramdocs-sample", limit=6)
    marker = tmp_path / "killed"
    on_ray, predictions = _run(Settings.load(overrides=SETS), DiesOnce(examples[3].question, marker), examples)
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # an actor's process died, not ours
    assert on_ray.n == 6 and not on_ray.failed
    assert sorted(p.id for p in predictions if p.method == "concat") == [ex.id for ex in examples]
    local, local_predictions = _run(Settings.load(overrides=[*SETS, "eval.engine=local"]), _answer, examples)
    assert _comparable(predictions) == _comparable(local_predictions)
    assert [r.metrics for r in on_ray.results] == [r.metrics for r in local.results]
