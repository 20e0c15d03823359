"""eval --where: each question's passages filtered by their metadata (own scope and an index)."""
import json
from pathlib import Path

from typer.testing import CliRunner

from tanglerag import Tanglerag
from tanglerag.cli import app
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm


def _dataset(path: Path) -> Path:
    passages = [{"id": "old", "text": "Oslo was the capital in 1990.", "date": "1990"},
                {"id": "new", "text": "Oslo is the capital in 2024.", "date": "2024-01-01"}]
    path.write_text(json.dumps({"id": "q1", "question": "What is the capital?", "answers": ["Oslo"],
                                "passages": passages}) + "\n")
    return path


def test_evaluation_ranks_only_the_passages_the_where_lets_through(tmp_path):
    settings = Settings.load(overrides=[f"cache_dir={tmp_path / 'c'}", "retrieval.where=date >= 2024"])
    rag = Tanglerag(None, settings, llm=canned_llm(default="Oslo [1]"), embedder=HashEmbedder())
    rag.evaluate(_dataset(tmp_path / "d.jsonl"), out=tmp_path / "run")
    line = json.loads((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()[0])
    assert line["passage_ids"] == ["new"]


def test_eval_where_that_cannot_be_read_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["eval", "--dataset", str(_dataset(tmp_path / "d.jsonl")), "--where", "dat > 1"])
    assert result.exit_code == 2 and "where 'dat > 1': unknown field 'dat'" in " ".join(result.output.split())
