"""Command-line conventions: no wrapping in a pipe, --version, one line naming the setting meant, eval --no-cache."""

import io
import logging

from typer.testing import CliRunner

import tanglerag.cli.evaluate as evaluate
from tanglerag.cli import app
from tanglerag.cli.common import TerminalConsole, load_settings
from tanglerag.errors import InputError

runner = CliRunner()
LONG = "*[1] doc-7 (0.612) policy-2024.pdf p. 12, §Scope > Limits · 2024-03-01 " + "word " * 40


def test_printed_lines_are_not_wrapped_when_stdout_is_not_a_terminal():
    piped = io.StringIO()
    TerminalConsole(file=piped).print(LONG)
    assert piped.getvalue() == LONG + "\n"
    shown = io.StringIO()
    TerminalConsole(file=shown, force_terminal=True, width=80).print(LONG)
    assert len(shown.getvalue().splitlines()) > 1  # a terminal still gets lines that fit it


def test_log_lines_are_plain_and_whole_when_stderr_is_not_a_terminal(capsys, tmp_path):
    load_settings(None, [f"cache_dir={tmp_path}"], verbose=True)
    logging.getLogger("tanglerag.test").warning("%s", LONG + "\x1b[2J")
    assert capsys.readouterr().err == f"WARNING {LONG}\\x1b[2J\n"


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("tanglerag 0.")


def test_a_mistyped_setting_is_one_line_naming_the_one_meant(tmp_path):
    result = runner.invoke(app, ["ask", "x", "--index", str(tmp_path), "--set", "retrieval.topk=5"])
    assert result.exit_code == 2
    assert result.output == "error: invalid config: retrieval.topk: unknown setting (did you mean retrieval.top_k?)\n"
    result = runner.invoke(app, ["ask", "x", "--index", str(tmp_path), "--set", "llm.temperature=hot"])
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert "llm.temperature: Input should be a valid number" in result.output and "(given: 'hot')" in result.output


def test_a_mistyped_option_or_a_missing_argument_is_one_line_not_a_box():
    """A newcomer's `ask --metod ledger` printed a five-line box; docs/cli.md promises one line."""
    result = runner.invoke(app, ["ask", "x", "--metod", "ledger"], prog_name="tanglerag")
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert result.output.startswith("error: tanglerag ask: No such option: --metod")
    result = runner.invoke(app, ["ask"], prog_name="tanglerag")
    assert result.exit_code == 2 and result.output.startswith("error: tanglerag ask: Missing argument")
    result = runner.invoke(app, ["trace"])  # a group alone still shows its help
    assert "Usage" in result.output and "show" in result.output


def test_eval_no_cache_bypasses_the_llm_cache(monkeypatch, tmp_path):
    seen = {}

    def loaded(*args, **flags):
        seen["settings"] = load_settings(*args, **flags)
        raise InputError("stop here")

    monkeypatch.setattr(evaluate, "load_settings", loaded)
    result = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--no-cache", "--set", f"cache_dir={tmp_path}"])
    assert result.exit_code == 2 and seen["settings"].llm.cache is False
    runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--set", f"cache_dir={tmp_path}"])
    assert seen["settings"].llm.cache is True


def test_shell_completion_can_be_installed():
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.output and "--show-completion" in result.output
