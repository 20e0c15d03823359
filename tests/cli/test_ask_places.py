"""Issue 51: every citation says where in its file a passage stands - ``ask``'s passage lines, ``ask --json``, and the
chat answer's sources - for passages from PDFs (page), Markdown/HTML/Word (section path), and none for plain ones."""

import json

from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.outputs import AnswerOutput
from tanglerag.service.chat import content
from tanglerag.trace import Trace
from tanglerag.types import Answer, Passage, RetrievedPassage, Usage

runner = CliRunner()
PASSAGES = [
    Passage(id="hr/policy-2024.pdf#4", title="Leave policy", text="Staff take five days.",
            metadata={"path": "hr/policy-2024.pdf", "page": 12, "section": ["Scope", "Limits"], "date": "2024-03-01"}),
    Passage(id="notes.md#1", title="Notes", text="Leave is five days.", metadata={"path": "notes.md",
                                                                                  "section": ["Leave"]}),
    Passage(id="plain.txt", title="plain", text="Nothing placed.", metadata={"path": "plain.txt"}),
]
ANSWER = Answer(question="How long is leave?", method="concat", text="Five days [1]",
                citations=["hr/policy-2024.pdf#4", "notes.md#1"],
                passages=[RetrievedPassage(passage=p, score=0.6 - i / 10, rank=i + 1) for i, p in enumerate(PASSAGES)],
                usage=Usage(), trace=Trace())


def _ask(monkeypatch, tmp_path, *flags: str) -> str:
    class _Runtime:
        def __init__(self, settings, **kwargs) -> None:
            pass

        def answer(self, request) -> Answer:
            return ANSWER

    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)
    result = runner.invoke(app, ["ask", "How long?", "--index", str(tmp_path), *flags, "--set", f"cache_dir={tmp_path}"],
                           env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_passage_lines_say_the_file_page_and_section(monkeypatch, tmp_path):
    lines = [line for line in _ask(monkeypatch, tmp_path).splitlines() if line[1:2] == "["]
    assert lines[0].startswith("*[1] hr/policy-2024.pdf#4 (0.600) policy-2024.pdf p. 12, §Scope > Limits · 2024-03-01"
                               "  Staff take")
    assert lines[1].startswith("*[2] notes.md#1 (0.500) notes.md §Leave  Leave is")
    assert lines[2].startswith(" [3] plain.txt (0.400) Nothing placed")


def test_json_carries_location_page_and_section_only_where_known(monkeypatch, tmp_path):
    passages = json.loads(_ask(monkeypatch, tmp_path, "--json"))["passages"]
    assert passages[0] | {"text": ""} == {"id": "hr/policy-2024.pdf#4", "title": "Leave policy", "text": "",
                                          "score": 0.6, "date": "2024-03-01",
                                          "location": "policy-2024.pdf p. 12, §Scope > Limits", "page": 12,
                                          "section": ["Scope", "Limits"]}
    assert "page" not in passages[1] and passages[1]["section"] == ["Leave"]
    assert not {"location", "page", "section"} & set(passages[2])


def test_chat_sources_name_the_place_of_each_cited_passage():
    text = content(AnswerOutput.from_answer(ANSWER))
    assert "[1] Leave policy · policy-2024.pdf p. 12, §Scope > Limits · 2024-03-01" in text  # the file named once
    assert "[2] Notes · notes.md §Leave" in text
