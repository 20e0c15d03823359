"""``tanglerag ask`` and document metadata: each passage line shows its document's date and source, ``--json`` carries
them (left out when a document has none), and ``--where`` reaches the settings or is refused in one line."""

import json

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.trace import Trace
from tanglerag.types import Answer, Passage, RetrievedPassage, Usage

runner = CliRunner()
PASSAGES = [
    Passage(id="doc-7", title="Budget", text="The budget grew by 5,000.",
            metadata={"date": "2024-03-01", "source": "example.org", "authority": "official"}),
    Passage(id="doc-8", title="Old budget", text="The budget grew by 6,500.", metadata={"date": 2019}),
    Passage(id="doc-9", title="Note", text="A note without provenance.", metadata={"date": "not a date"}),
]
ANSWER = Answer(question="How much did the budget grow?", method="concat", text="5,000 [1]", citations=["doc-7"],
                passages=[RetrievedPassage(passage=p, score=0.61 - i / 10, rank=i + 1) for i, p in enumerate(PASSAGES)],
                usage=Usage(), trace=Trace())


@pytest.fixture
def asked(monkeypatch, tmp_path):
    """Runs ``ask`` against a stand-in runtime that answers ANSWER and keeps the settings it was built with."""
    built = []

    class _Runtime:
        def __init__(self, settings, **kwargs) -> None:
            built.append(settings)

        def answer(self, request) -> Answer:
            return ANSWER

    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)

    def run(*flags: str):
        result = runner.invoke(app, ["ask", "How much?", "--index", str(tmp_path), *flags,
                                     "--set", f"cache_dir={tmp_path}"])
        return result, built
    return run


def test_each_passage_line_shows_the_documents_date_and_source(asked):
    result, _ = asked()
    lines = [line for line in result.stdout.splitlines() if line[1:2] == "["]
    assert lines[0] == "*[1] doc-7 (0.610) 2024-03-01 · example.org  The budget grew by 5,000...."
    assert lines[1] == " [2] doc-8 (0.510) 2019  The budget grew by 6,500...."
    assert lines[2] == " [3] doc-9 (0.410) A note without provenance...."  # an unreadable date is left out


def test_a_passage_line_stays_one_line_when_the_text_has_line_breaks(asked, monkeypatch):
    """A Markdown chunk keeps its heading and blank lines; its passage line must not break there, or a program
    reading one passage a line (``ask ... | grep``) splits it."""
    markdown = Passage(id="rates.md", title="Rates", text="# Rates\n\nThe standard rate\nis 19 percent.\n",
                       metadata={"date": "2024-03-01", "path": "rates.md", "section": ["Rates"]})
    monkeypatch.setattr("tests.cli.test_ask_metadata.ANSWER", ANSWER.model_copy(
        update={"passages": [RetrievedPassage(passage=markdown, score=0.5, rank=1)], "citations": []}))
    result, _ = asked()
    assert " [1] rates.md (0.500) rates.md §Rates · 2024-03-01  # Rates The standard rate is 19 percent...." in (
        result.stdout.splitlines())


def test_json_carries_date_and_source_only_where_a_document_gives_them(asked):
    result, _ = asked("--json")
    passages = json.loads(result.stdout)["passages"]
    assert [(p.get("date"), p.get("source")) for p in passages] == [("2024-03-01", "example.org"), ("2019", None),
                                                                     (None, None)]
    assert set(passages[2]) == {"id", "title", "text", "score"}


def test_where_reaches_the_settings(asked):
    where = "date >= 2024-01-01 and source in (example.org, 'Le Monde')"
    result, built = asked("--where", where)
    assert result.exit_code == 0 and built[-1].retrieval.where == where


def test_a_where_no_passage_passes_says_so_beside_the_answer(asked, monkeypatch):
    """With every passage filtered out the method answers without evidence; the user must not take that answer for
    one from the documents the filter meant to keep."""
    result, _ = asked("--where", "date >= 2019")  # passages passed: nothing to say
    assert result.exit_code == 0 and result.stderr == ""
    monkeypatch.setattr("tests.cli.test_ask_metadata.ANSWER", ANSWER.model_copy(
        update={"passages": [], "citations": [], "text": "unknown"}))
    for flags in (["--where", "source in (a, b)"], ["--set", "retrieval.where=source in (a, b)", "--json"]):
        result, _ = asked(*flags)
        assert result.exit_code == 0
        assert result.stderr == "no passage passes the filter 'source in (a, b)': the answer was made without passages\n"


@pytest.mark.parametrize("flags, message", [
    (["--where", "dat >= 2024"], "error: where 'dat >= 2024': unknown field 'dat': filter on date, source"),
    (["--where", "date >= 2024-13"], "error: where 'date >= 2024-13': date value '2024-13' cannot be read"),
    (["--where", "date >= 2024", "--user", "alice"], "error: a where filter does not apply to a question with a user yet"),
    (["--set", "retrieval.where=date >= 2024", "--user", "alice"], "error: a where filter does not apply to a question with a user"),
])
def test_a_where_that_cannot_apply_is_one_line_and_exit_2(asked, flags, message):
    result, built = asked(*flags)
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and said.startswith(message) and "Traceback" not in said
    assert built == []  # refused before anything was loaded
