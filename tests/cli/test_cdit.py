import json

from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import store_passages
from tanglerag.index.trim import TrimLog
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

runner = CliRunner()


def test_status_and_undo(tmp_path, monkeypatch):
    monkeypatch.setattr("tanglerag.runtime.Embedder", lambda cfg: HashEmbedder())
    folder = tmp_path / "idx"
    docs = [Passage(id=f"d{i}", text=f"passage number {i} about lamps") for i in range(12)]
    store_passages(folder, docs, HashEmbedder(), IndexConfig(index_type="hnsw"))
    log = TrimLog(folder)
    log.add_witnesses("q1", ["d1"], ["d2", "d3"], judge="test", k=2)
    log.add_witnesses("q2", ["d1"], ["d2"], judge="test", k=2)
    result = runner.invoke(app, ["cdit", "status", "--index", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert status["separated_pairs"] == 1 and status["pending_witnesses"] == 1 and status["judged_queries"] == 2
    assert status["witnesses"] == 3 and status["cut_links"] >= 1 and status["index_type"] == "hnsw"
    result = runner.invoke(app, ["cdit", "undo", "--index", str(folder), "--to", "2"])
    assert result.exit_code == 0 and "dropped 2" in result.output
    status = json.loads(runner.invoke(app, ["cdit", "status", "--index", str(folder), "--json"]).stdout)
    assert status["separated_pairs"] == 0 and status["cut_links"] == 0 and status["witnesses"] == 2


def test_not_an_index_is_one_line(tmp_path):
    result = runner.invoke(app, ["cdit", "undo", "--index", str(tmp_path)])
    assert result.exit_code == 2 and "not a tanglerag index" in result.output


def test_trim_judges_a_question_set_and_separates(tmp_path, monkeypatch):
    from tanglerag.testing import canned_llm

    def reply(messages):
        if not messages[0].content.startswith("You are a careful checker"):
            return "unknown"
        return "False" if "switched off" in messages[-1].content else "True"

    monkeypatch.setattr("tanglerag.runtime.Embedder", lambda cfg: HashEmbedder())
    monkeypatch.setattr("tanglerag.runtime.build_llm", lambda *args: canned_llm(responder=reply))
    folder = tmp_path / "idx"
    docs = [Passage(id="on", text="Jack switched on the radio."), Passage(id="off", text="Tom switched off the radio.")]
    store_passages(folder, docs, HashEmbedder(), IndexConfig(index_type="hnsw"))
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "Who switched on the radio?", "answers": ["Jack"]}\n'
                         '{"question": "Which person switched the radio on?", "answers": ["Jack"]}\n')
    result = runner.invoke(app, ["cdit", "trim", "--index", str(folder), "--dataset", str(questions), "--witnesses",
                                 "2", "--top-k", "2", "--json", "--set", "cdit.determiner=false"])
    assert result.exit_code == 0, result.output
    totals = json.loads(result.stdout)
    assert totals == {"questions": 2, "judged": 4, "reused": 0, "discarded": 2, "unreadable": 0, "witnesses": 2,
                      "separated_now": 1, "llm_calls": 4}
    assert TrimLog(folder).state().is_separated("on", "off")
