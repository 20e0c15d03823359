"""``ask --history FILE``: the question is made standalone from the conversation in the file before retrieval."""

import io
import json
import re

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.cli.common import TerminalConsole
from tanglerag.index.passage_index import store_passages
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage

runner = CliRunner()
RULES = [("Standalone question:", "What is the capital of Germany?"), ("capital of Germany", "Berlin [1]")]


@pytest.fixture
def ask(monkeypatch, tmp_path):
    backend = CannedBackend(RULES, default="unknown")
    store_passages(tmp_path / "idx", [Passage(id="b", title="Berlin", text="Berlin is the capital of Germany.")],
                   HashEmbedder(), Settings().index)

    class _Runtime(Runtime):  # the real runtime on the canned model and the hashing embedder
        def __init__(self, settings, index_dir=None):
            super().__init__(settings, index_dir=index_dir, llm=LLM(backend, CallCache(None)), embedder=HashEmbedder())

    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)

    def run(*flags: str):
        return runner.invoke(app, ["ask", "and Germany?", "--index", str(tmp_path / "idx"), *flags,
                                   "--set", f"cache_dir={tmp_path}"])
    return run


def test_a_follow_up_is_answered_with_its_history(ask, tmp_path):
    history = tmp_path / "chat.json"
    history.write_text(json.dumps([{"role": "user", "content": "What is the capital of France?"},
                                   {"role": "assistant", "content": "Paris [1]"}]))
    result = ask("--history", str(history))
    assert result.exit_code == 0, result.output
    assert "Berlin [1]" in result.stdout
    assert "follow-up read as: What is the capital of Germany? (opens like a continuation ('and'))\n" in result.stdout
    lines = tmp_path / "chat.jsonl"
    lines.write_text('{"role": "user", "content": "What is the capital of France?"}\n')
    traced = json.loads(ask("--history", str(lines), "--json", "--trace").stdout)
    assert traced["question"] == "What is the capital of Germany?"
    assert [c["stage"] for c in traced["trace"]["calls"]] == ["rewrite", "answer"]  # the default, vetted


def test_a_history_that_cannot_be_read_is_one_line(ask, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"role": "user"')
    result = ask("--history", str(bad))
    assert result.exit_code == 2 and "not a chat history" in result.output and "Traceback" not in result.output
    result = ask("--history", str(tmp_path / "missing.json"))
    assert result.exit_code == 2 and "cannot read the history" in result.output
    bad.write_text("[" * 100_000)  # Python's JSON parser recurses: a RecursionError, not a JSONDecodeError
    result = ask("--history", str(bad))
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert "not a chat history (nested too deeply to read" in result.output


def test_a_history_turn_with_a_role_no_chat_has_is_refused_not_skipped(ask, tmp_path):
    """A mistyped role ("User", "bot") would drop that turn silently and answer the follow-up without it."""
    history = tmp_path / "chat.json"
    history.write_text(json.dumps([{"role": "User", "content": "What is the capital of France?"}]))
    result = ask("--history", str(history))
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert "not a chat history (message 1: unknown role 'User': user or assistant" in result.output
    history.write_text(json.dumps([{"role": "system", "content": "Be brief."}, {"role": "developer", "content": "x"},
                                   {"role": "user", "content": "What is the capital of France?"}]))
    assert ask("--history", str(history)).exit_code == 0  # chat roles that are not turns are still skipped


def test_a_status_line_shows_the_stage_the_calls_and_the_seconds_then_the_answer_streams(ask, tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr("tanglerag.cli.ask.console", TerminalConsole(file=screen, force_terminal=True, width=100))
    history = tmp_path / "chat.json"
    history.write_text(json.dumps([{"role": "user", "content": "What is the capital of France?"}]))
    result = ask("--history", str(history))
    shown = screen.getvalue()  # rich redraws at most a few times a second: the last state at least, then cleared
    assert re.search(r"vetted: answer \.\.\. \(1 model call done, \d+ s\)", shown)
    after_status = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.split("\x1b[2K")[-1])  # the status line erased
    assert after_status == "Berlin [1]\n"  # then the tokens as they came ("Berlin", " [1]"), where it was
    assert result.exit_code == 0 and "Berlin [1]" not in result.stdout  # once: not again under the streamed line
    assert "*[1] b (" in result.stdout


@pytest.mark.parametrize(("text", "streamed", "rest"), [
    ("Paris [1]\nSet aside: Lyon: older [2]", "Paris [1]", "Set aside: Lyon: older [2]"),  # the ledger's lines
    ("EUR 9.80 [1]\nSet aside: EUR 8.50: dated 2022 [2]", "EUR 8.50 [2]\nEUR 9.80 [1]",
     "Set aside: EUR 8.50: dated 2022 [2]"),  # vetted asked twice: the last streamed line is the answer
    ("unknown", "I could not find it", "unknown"),  # the method rewrote the reply: all of it
])
def test_after_the_streamed_tokens_only_what_they_did_not_print_is_printed(text, streamed, rest):
    from tanglerag.text import after_streamed

    after = after_streamed(text, streamed)
    assert (text if after is None else after.strip("\n")) == rest


def test_an_answer_the_rules_changed_after_it_streamed_is_printed_under_a_line_saying_so(capsys):
    """A newcomer saw "3 [1]" stream, then "3 days [1]" under it with nothing to say which was the answer."""
    from tanglerag.cli.ask import print_answer
    from tanglerag.types import Answer

    print_answer(Answer(question="q", method="vetted", text="3 days [1]"), streamed="2 days [2]\n3 [1]")
    assert capsys.readouterr().out.splitlines()[:2] == ["the answer, as the method settled it:", "3 days [1]"]
    print_answer(Answer(question="q", method="vetted", text="3 days [1]"), streamed="3 days [1]")
    assert "settled" not in capsys.readouterr().out


def test_streamed_tokens_keep_their_line_breaks(monkeypatch):
    """The re-asked answer's "(asked again without ...)" line came out as a literal \\x0a between the answers."""
    from tanglerag.cli.ask import _Watch
    from tanglerag.tracking import ProgressEvent

    screen = io.StringIO()
    monkeypatch.setattr("tanglerag.cli.ask.console", TerminalConsole(file=screen, width=100))
    watch = _Watch("vetted", type("Status", (), {"stop": lambda self: None, "update": lambda self, _: None})())
    for text in ("2 days [2]", "\n(asked again without chat)\n", "3 [1]", "\x1b[2J"):
        watch.heard(ProgressEvent(type="token", stage="answer", data={"text": text}))
    assert screen.getvalue() == "2 days [2]\n(asked again without chat)\n3 [1]\\x1b[2J"  # other controls escaped


def test_an_unknown_answer_says_in_words_that_the_documents_do_not_say(capsys):
    """A newcomer read a bare "unknown" as a fault of the tool."""
    from tanglerag.cli.ask import print_answer
    from tanglerag.types import Answer

    print_answer(Answer(question="q", method="vetted", text="unknown"))
    assert capsys.readouterr().out.splitlines()[:2] == [
        "unknown", "(the documents do not say: no passage below answers the question as the method read them)"]
    print_answer(Answer(question="q", method="vetted", text="3 days [1]"))
    assert "do not say" not in capsys.readouterr().out
