"""``diagnose``: tangles auto read in a run, the routes it took, every method's score per tangle, and the routes
that scored best written as a settings file the next run reads."""

import yaml
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.eval.families.auto import diagnose
from tanglerag.eval.records import Prediction
from tanglerag.eval.runs import Run, RunInfo
from tanglerag.methods.auto.steps import AutoStep
from tanglerag.settings import Settings
from tanglerag.trace import Trace

# question: (tangle auto read, its route, recall of auto / concat / separate)
TABLE = {"q1": ("ambiguous", "corg", 0.5, 0.5, 1.0), "q2": ("ambiguous", "corg", 0.5, 0.0, 1.0),
         "q3": ("clean", "concat", 1.0, 1.0, 1.0)}


def predictions() -> list[Prediction]:
    rows = []
    for qid, (tangle, route, *scores) in TABLE.items():
        for method, score in zip(("auto", "concat", "separate"), scores, strict=True):
            steps = [AutoStep(tangle=tangle, route=route, why="probe", signals={"passages": 3})] if method == "auto" else []
            calls = {"auto": 3.0, "concat": 1.0, "separate": 3.0}[method]
            rows.append(Prediction(id=qid, question="q", method=method, answer="a", citations=[], passage_ids=[],
                                   gold=["a"], metrics={"answer_recall": score}, usage={"llm_calls": calls},
                                   usage_by_stage={}, trace=Trace(steps=steps), tangles=["ambiguous"]))
    return rows


def test_per_tangle_routes_scores_and_the_best_method():
    found = diagnose(Run(RunInfo(name="r", dataset="ramdocs", finished=True), predictions()), "answer_recall")
    ambiguous, clean = found.rows
    assert (ambiguous.tangle, ambiguous.questions, ambiguous.routes) == ("ambiguous", 2, {"corg": 2})
    assert ambiguous.scores == {"auto": 0.5, "concat": 0.25, "separate": 1.0} and ambiguous.best == "separate"
    assert clean.best == "concat"  # a tie with separate goes to the method with fewer calls
    routes = found.suggested_routes({"clean": "corg", "ambiguous": "corg", "conflicting": "post-fusion"})
    assert routes == {"clean": "concat", "ambiguous": "separate", "conflicting": "post-fusion"}  # no evidence: kept


def test_the_command_writes_routes_the_next_run_reads_and_refuses_a_run_without_auto(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in predictions()))
    routes = tmp_path / "routes.yaml"
    result = CliRunner().invoke(app, ["diagnose", str(run), "--write", str(routes)])
    assert result.exit_code == 0, result.output
    assert "ambiguous: 2 question(s), routed to corg x2" in result.output and "'ambiguous': 'separate'" in result.output
    assert yaml.safe_load(routes.read_text())["auto"]["routes"]["ambiguous"] == "separate"
    assert Settings.load(routes).auto.routes["ambiguous"] == "separate"
    (run / "predictions.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in predictions()
                                                   if p.method != "auto"))
    refused = CliRunner().invoke(app, ["diagnose", str(run)])
    assert refused.exit_code == 2 and "has no answers from auto" in refused.output
