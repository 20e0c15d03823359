"""``tanglerag ask`` with a conflict report (``--set conflicts.report=true``): a "Sources disagree" block in the plain
output, the typed ``conflicts`` in ``--json``, and the step in ``trace show``; an answer without one prints as
before. The runtime is a stand-in that answers from the conflicting corpus with the canned model."""

import json

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.methods.base import make_method
from tanglerag.outputs import AnswerOutput
from tests.conflicting import JORDAN, QUESTION, conflicting_backend
from tests.conftest import as_retrieved, resources

runner = CliRunner()


class _Runtime:
    """The settings ``ask`` loaded, a method built from them, and the corpus's three passages retrieved."""

    def __init__(self, settings, index_dir) -> None:
        self.settings = settings

    def answer(self, request):
        method = make_method(request.method, resources(LLM(conflicting_backend(), CallCache(None)), self.settings))
        return method.answer(request.question, as_retrieved(JORDAN))


@pytest.fixture
def ask(monkeypatch, tmp_path):
    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)

    def run(*flags: str) -> str:
        result = runner.invoke(app, ["ask", QUESTION, "--index", str(tmp_path), "--set", f"cache_dir={tmp_path}",
                                     *flags], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        return result.stdout
    return run


def test_the_plain_answer_says_where_sources_disagree(ask):
    lines = ask("--set", "conflicts.report=true").splitlines()
    block = lines[lines.index("Sources disagree (misinformation about Michael Jordan, the basketball player):"):][:4]
    assert block[1:] == ["  kept     1963 - [1] [2], 2 witnesses", "  rejected 1998 - [3], 1 witness; fewer independent sources (1 against 2)",
                         "  rule: witnesses 2 vs 1"]
    assert lines[0] == "1963 [1][2]" and not any(line.startswith("sources disagree (") for line in lines)
    assert "conflicts 3 calls" in lines[-1]  # calls by stage
    assert "disagree" not in ask().lower()


def test_a_dispute_no_policy_settles_says_so(ask):
    out = ask("--set", "conflicts.report=true", "--set", "ledger.policies=[show-all]")
    assert "  disputed 1963 - [1] [2], 2 witnesses" in out.splitlines()
    assert "  rule: no policy decided (show-all: 2 answers reported as disputed)" in out.splitlines()


def test_json_carries_the_typed_report_and_reads_back(ask):
    printed = ask("--json", "--set", "conflicts.report=true")
    out = json.loads(printed)
    assert list(out)[-1] == "conflicts"  # after the answer's own fields (and before a trace)
    [report] = out["conflicts"]
    assert report["kind"] == "misinformation" and report["rule"] == "witnesses 2 vs 1"
    assert [(s["answer"], s["verdict"], s["passages"]) for s in report["sides"]] == [
        ("1963", "kept", ["bio", "bulls"]), ("1998", "rejected", ["fan"])]
    assert json.dumps(AnswerOutput.model_validate(out).compact(), ensure_ascii=False, indent=2) + "\n" == printed
    assert "conflicts" not in json.loads(ask("--json"))


def test_trace_show_renders_the_report(ask, tmp_path):
    traced = tmp_path / "traced.json"
    traced.write_text(ask("--json", "--trace", "--set", "conflicts.report=true"))
    shown = runner.invoke(app, ["trace", "show", str(traced)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert ("conflicts: misinformation (3 claim(s), 3 quoted; policies supersede, corrections, releases, register, "
            "newest, authority, witnesses, provenance, show-all)") in lines
    assert "    rejected: 1998 - 1 witness(es) <- fan (fewer independent sources (1 against 2))" in lines and "conflicts 3 calls" in shown.output


def test_trace_show_prints_an_answer_of_several_lines_a_line_each(tmp_path):
    """Issue 69: a set-aside line showed as ``\\x0a`` inside the answer's one line; each line is its own now, still
    escaped within itself (a line cannot forge another field's)."""
    record = {"method": "ledger", "question": "q?", "answer": "16 weeks [1]\nSet aside: 26 weeks: outdated [2]",
              "trace": {}}
    traced = tmp_path / "t.json"
    traced.write_text(json.dumps(record))
    shown = runner.invoke(app, ["trace", "show", str(traced)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "answer: 16 weeks [1]" in shown.output and "        Set aside: 26 weeks: outdated [2]" in shown.output
    assert "\\x0a" not in shown.output
