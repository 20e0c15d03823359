"""``tanglerag search`` (issue 63, item 1): ranked passages with their provenance and scores, one line each as ``ask``
lists them or as JSON, filtered by ``--where``, and no LLM built or called (the hashing embedder stands in for
MiniLM)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import store_passages
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.outputs import SearchOutput
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage
from tests.hashing_cli import HashingEmbedder

runner = CliRunner()
PASSAGES = [
    Passage(id="hr/leave.pdf#0", title="Leave policy", text="Staff take five days of leave a year.",
            metadata={"path": "hr/leave.pdf", "page": 3, "section": ["Scope"], "date": "2024-03-01",
                      "source": "hr.example.org"}),
    Passage(id="notes.md#0", title="Notes", text="Leave is five days, the notes say.",
            metadata={"path": "notes.md", "section": ["Leave"], "date": "2019"}),
    Passage(id="tea", title="Tea", text="Green tea is steeped at eighty degrees."),
]

LEAVE = "Staff take five days of leave a year."


@pytest.fixture
def searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``search`` on an index of PASSAGES; the LLM the runtime would build is a canned one, recorded if built."""
    store_passages(tmp_path / "idx", PASSAGES, HashEmbedder(), IndexConfig())
    monkeypatch.setattr("tanglerag.runtime.Embedder", HashingEmbedder)
    built: list[CannedBackend] = []

    def build_llm(*args, **kwargs) -> LLM:
        built.append(CannedBackend())
        return LLM(built[-1], CallCache(None))

    monkeypatch.setattr("tanglerag.runtime.build_llm", build_llm)

    def run(*args: str, exit_code: int = 0) -> str:
        result = runner.invoke(app, ["search", *args, "--index", str(tmp_path / "idx"),
                                     "--set", f"cache_dir={tmp_path / 'cache'}"], env={"COLUMNS": "300"})
        assert result.exit_code == exit_code, result.output
        assert all(not backend.requests for backend in built) and not built  # no model call, no model at all
        return result.stdout if exit_code == 0 else result.output
    return run


def test_each_passage_is_one_line_as_ask_lists_it_with_its_place_and_score(searched):
    lines = searched(LEAVE).splitlines()
    assert lines[0].startswith(" [1] hr/leave.pdf#0 (")
    assert ") leave.pdf p. 3, §Scope · 2024-03-01 · hr.example.org  Staff take five days" in lines[0]
    notes = next(line for line in lines if "notes.md#0" in line)
    assert ") notes.md §Leave · 2019  Leave is five days" in notes
    assert [line[:4] for line in lines[:3]] == [" [1]", " [2]", " [3]"] and len(lines) == 4
    assert lines[3].startswith("3 passages in ") and lines[3].endswith("s, no LLM call")


def test_json_is_the_typed_output_with_path_page_section_date_source_and_scores(searched):
    printed = json.loads(searched(LEAVE, "--json", "--top-k", "2"))
    output = SearchOutput.model_validate(printed)
    assert output.query == LEAVE and len(output.passages) == 2 and output.passages[0].id == "hr/leave.pdf#0"
    first = printed["passages"][0]
    assert first | {"score": 0} == {"id": "hr/leave.pdf#0", "title": "Leave policy", "score": 0,
                                    "text": "Staff take five days of leave a year.", "date": "2024-03-01",
                                    "source": "hr.example.org", "location": "leave.pdf p. 3, §Scope", "page": 3,
                                    "section": ["Scope"], "path": "hr/leave.pdf"}
    assert first["score"] >= printed["passages"][1]["score"]
    assert printed["usage"]["llm_calls"] == 0 and printed["usage"]["prompt_tokens"] == 0


def test_where_keeps_the_passages_whose_document_passes_it(searched):
    printed = json.loads(searched("leave", "--where", "date >= 2024", "--json"))
    assert [p["id"] for p in printed["passages"]] == ["hr/leave.pdf#0"]
    none = searched("leave", "--where", "date >= 2030").splitlines()
    assert len(none) == 1 and none[0].startswith("0 passages in ")


def test_user_errors_are_one_line(searched, tmp_path):
    assert "unknown field 'dat'" in searched("leave", "--where", "dat >= 2024", exit_code=2)
    assert "invalid query" in searched("   ", exit_code=2)
    assert "top_k" in searched("leave", "--top-k", "0", exit_code=2)
    missing = runner.invoke(app, ["search", "leave", "--index", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "not a tanglerag index" in missing.output


def test_passages_under_the_relevance_floor_are_left_out_and_named(searched):
    everything = json.loads(searched(LEAVE, "--json", "--set", "retrieval.min_score=null"))["passages"]
    floor = (everything[0]["score"] + everything[-1]["score"]) / 2
    out = searched(LEAVE, "--set", f"retrieval.min_score={floor}")
    kept = [p for p in everything if p["score"] >= floor]
    dropped = [p for p in everything if p["score"] < floor]
    assert dropped and f"{len(kept)} passage" in out
    assert f"under the relevance floor {floor:g}, left out: {dropped[0]['id']} (" in out
