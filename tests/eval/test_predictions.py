"""A prediction is an answer record (the fields ``ask --json`` prints, typed once) plus how it was scored; the lines
stored runs hold still read back as they were written."""

import json
from pathlib import Path

from tanglerag.conflicts import Claim, ConflictReport, ConflictStep, Side
from tanglerag.eval.records import Prediction
from tanglerag.outputs import AnswerOutput, AnswerRecord
from tanglerag.trace import Trace

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
# a line as runs wrote it before predictions shared the answer's fields: its own key order, counts as floats
STORED = {"id": "q1", "question": "Who?", "method": "concat", "answer": "Ann [1]", "citations": ["d0"],
          "passage_ids": ["d0"], "gold": ["Ann"], "metrics": {"accuracy": 1.0, "unk": None},
          "usage": {"llm_calls": 1.0, "cached_calls": 0.0, "prompt_tokens": 80.0, "completion_tokens": 3.0,
                    "model_seconds": 0.5, "seconds": 0.6},
          "usage_by_stage": {"generate": {"llm_calls": 1.0, "cached_calls": 0.0, "prompt_tokens": 80.0,
                                          "completion_tokens": 3.0, "model_seconds": 0.5, "seconds": 0.1}},
          "parts": [], "trace": {"calls": [], "steps": [{"kind": "from_a_newer_version", "detail": 3}]},
          "tangles": ["noise"],
          "passages": [{"passage": {"id": "d0", "title": "", "text": "Ann did.", "metadata": {"type": "correct"}},
                        "score": 0.5, "rank": 1}]}


def test_a_prediction_has_the_answer_fields_of_ask_json_with_the_same_types():
    assert set(AnswerRecord.model_fields) <= set(Prediction.model_fields)
    for name in set(AnswerRecord.model_fields) - {"passages", "trace"}:  # whole passages; the trace always kept
        assert Prediction.model_fields[name].annotation == AnswerOutput.model_fields[name].annotation, name


def test_a_stored_line_reads_back_and_writes_the_same_values():
    prediction = Prediction.model_validate_json(json.dumps(STORED))
    assert json.loads(prediction.model_dump_json()) == STORED | {"conflicts": []}  # a report-less trace: none
    assert prediction.passages[0].passage.metadata == {"type": "correct"} and prediction.trace.steps[0].kind


def test_every_stored_run_in_the_repository_still_reads():
    files = sorted(RESULTS.rglob("predictions.jsonl"))
    assert files
    for path in files:
        first = path.read_text().split("\n", 1)[0]
        stored, written = json.loads(first), json.loads(Prediction.model_validate_json(first).model_dump_json())
        same = ("id", "question", "method", "answer", "citations", "gold", "metrics", "usage", "usage_by_stage")
        assert [written[key] for key in same] == [stored[key] for key in same], path


def test_a_stored_line_with_a_conflict_step_reads_its_reports_from_the_trace():
    report = ConflictReport(kind="misinformation", rule="witnesses 2 vs 1", sides=[
        Side(answer="Ann", passages=["d0"], witnesses=2), Side(answer="Bo", passages=["d1"], witnesses=1,
                                                              verdict="rejected")])
    step = ConflictStep(claims=[Claim(answer="Ann", passage_id="d0")], reports=[report])
    line = json.dumps(STORED | {"trace": Trace(steps=[step]).model_dump(mode="json")})  # written before the field
    prediction = Prediction.model_validate_json(line)
    assert prediction.conflicts == [report]
    assert Prediction.model_validate_json(prediction.model_dump_json()).conflicts == [report]
