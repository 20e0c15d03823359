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
