"""An evaluation with ``conflicts.report``: each prediction carries its typed reports, written to predictions.jsonl
and read back, and the conflict metrics score them."""

import json

from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import Prediction
from tanglerag.eval.report import write_outputs
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tests.conflicting import JORDAN, QUESTION, conflicting_backend

LABELS = {"bio": "correct", "bulls": "correct", "fan": "misinfo"}
EXAMPLE = QAExample(id="q0", question=QUESTION, answers=["1963"], tangles=["misinformation"],
                    passages=[p.model_copy(update={"metadata": {"type": LABELS[p.id]}}) for p in JORDAN],
                    metadata={"wrong_answers": ["1998"]})
METRICS = ["misinfo_leak", "conflict_recall", "false_conflict_rate"]


def run(llm_factory, embedder, *overrides: str):
    settings = Settings.load(overrides=["retrieval.top_k=3", *overrides])
    runner = EvalRunner(Runtime(settings, llm=llm_factory(conflicting_backend(), persistent=False), embedder=embedder),
                        metrics=METRICS)
    return runner.run("conflicting", [EXAMPLE], ["concat"])


def test_predictions_carry_the_report_and_the_metrics_score_it(llm_factory, embedder, tmp_path):
    report, [prediction] = run(llm_factory, embedder, "conflicts.report=true")
    [conflict] = prediction.conflicts
    assert conflict.kind == "misinformation" and {s.answer: s.verdict for s in conflict.sides} == {
        "1963": "kept", "1998": "rejected"}
    assert prediction.metrics == {"misinfo_leak": 0.0, "conflict_recall": 1.0, "false_conflict_rate": None}
    assert prediction.usage_by_stage["conflicts"]["llm_calls"] == 3
    write_outputs(tmp_path / "out", report, [prediction])
    line = (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()[0]
    assert json.loads(line)["conflicts"][0]["rule"] == "witnesses 2 vs 1"
    assert Prediction.model_validate_json(line).conflicts == prediction.conflicts


def test_without_the_report_the_conflict_metrics_do_not_apply(llm_factory, embedder):
    report, [prediction] = run(llm_factory, embedder)
    assert prediction.conflicts == [] and "conflicts" not in prediction.usage_by_stage
    assert report.results[0].metrics["conflict_recall"] is None
