"""Issue 49's evaluation-run cases: a resumed ``eval --out`` never mixes another corpus or an edited dataset into its
answers, a damaged run folder is one line naming the file, a finished run's report is not overwritten by a smaller
run, a checkpoint line the run cannot use is reported and its question asked again, and Ctrl-C leaves at once saying
what is saved and how to resume. The CLI runs as a real process where the case is what a person sees."""

import json
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tanglerag.cli.run_progress import RunProgress
from tanglerag.config import IndexConfig
from tanglerag.datasets.registry import load_dataset
from tanglerag.errors import InputError
from tanglerag.eval.engines.local import answer_locally
from tanglerag.eval.report import write_outputs
from tanglerag.eval.runner import EvalRunner
from tanglerag.eval.worker import QuestionWorker
from tanglerag.index.passage_index import store_passages
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, fake_openai_server
from tanglerag.types import Passage
from tests.hashing_cli import HASHING_CLI

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
QUESTIONS = [{"id": f"q{i}", "question": f"Who wrote book {i}?", "answers": [f"Author {i}"],
              "passages": [f"Book {i} was written by Author {i}.", "Nothing about books here."]} for i in range(4)]


def _reply(body: dict) -> str:
    return "Author [1]"


def _sets(server: dict, tmp_path: Path) -> list[str]:
    """The settings every run of a test shares, in-process and on the command line alike."""
    return ["llm.backend=openai", f"llm.base_url={server['base_url']}", "llm.cache=false", "retrieval.top_k=2",
            f"cache_dir={tmp_path / 'cache'}"]


def _cli(server: dict, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sets = [part for value in _sets(server, tmp_path) for part in ("--set", value)]
    return subprocess.run([*HASHING_CLI, "eval", "--methods", "concat", *args, *sets],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)


def _one_line(done: subprocess.CompletedProcess, *fragments: str) -> None:
    """Refused as a user error: exit code 2, one line on stderr holding every fragment, no traceback."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def _write_dataset(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _run(server: dict, tmp_path: Path, dataset: str, *, out: Path, index: Path | None = None,
         limit: int | None = None, sets: tuple[str, ...] = ()):
    """An eval in this process, on the settings the CLI gets, with the hashing embedder; writes its outputs."""
    settings = Settings.load(overrides=[*_sets(server, tmp_path), *sets])
    name, examples = load_dataset(str(tmp_path / dataset), limit=limit)
    runtime = Runtime(settings, index_dir=index, embedder=HashEmbedder())
    report, predictions = EvalRunner(runtime).run(name, examples, ["concat"], pool=examples, out=out)
    write_outputs(out, report, predictions)
    return report, predictions


def _index(folder: Path, prefix: str, n: int) -> None:
    passages = [Passage(id=f"{prefix}{i}", text=f"Book {i} was written by Author {i}.") for i in range(n)]
    store_passages(folder, passages, HashEmbedder(), IndexConfig())


def test_a_resume_on_another_index_or_on_one_grown_since_is_refused_in_one_line(tmp_path):
    _write_dataset(tmp_path / "closed.jsonl", [{k: v for k, v in row.items() if k != "passages"} for row in QUESTIONS])
    _index(tmp_path / "idx", "a", 3)
    _index(tmp_path / "other", "b", 3)
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "closed.jsonl", out=tmp_path / "run", index=tmp_path / "idx")
        asked = server["requests"]
        same = _cli(server, tmp_path, "--dataset", "closed.jsonl", "--index", "idx", "--out", "run")
        assert same.returncode == 0 and server["requests"] == asked, same.stderr  # nothing changed: nothing asked
        stored = (tmp_path / "run" / "checkpoint.jsonl").read_bytes()
        _one_line(_cli(server, tmp_path, "--dataset", "closed.jsonl", "--index", "other", "--out", "run"),
                  "holds a run with another index (version data-", "of 3 passages", "--restart")
        store_passages(tmp_path / "idx", [Passage(id="new", text="Book 9 was written by Author 9.")], HashEmbedder(),
                       IndexConfig())  # index --add
        grown = _cli(server, tmp_path, "--dataset", "closed.jsonl", "--index", "idx", "--out", "run")
        _one_line(grown, "another index", "of 3 passages", "now version data-", "of 4 passages",
                  "give another --out, or add --restart")
        assert server["requests"] == asked and (tmp_path / "run" / "checkpoint.jsonl").read_bytes() == stored
    _write_dataset(tmp_path / "own.jsonl", QUESTIONS)
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "own.jsonl", out=tmp_path / "own")
        _one_line(_cli(server, tmp_path, "--dataset", "own.jsonl", "--index", "idx", "--out", "own"),
                  "another index (no index; now version data-")


def test_a_resume_on_edited_questions_or_gold_is_refused_and_restart_starts_over(tmp_path):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run")
        asked = server["requests"]
        edited = [dict(row) for row in QUESTIONS]
        edited[1]["answers"] = ["Somebody else"]
        edited[2]["question"] = "Who really wrote book 2?"
        _write_dataset(tmp_path / "d.jsonl", edited)
        _one_line(_cli(server, tmp_path, "--dataset", "d.jsonl", "--out", "run"),
                  "holds a run with other questions (question q1's gold answers changed, and 1 more)",
                  "give another --out, or add --restart to discard its 4 answers and start over")
        assert server["requests"] == asked
        restarted = _cli(server, tmp_path, "--dataset", "d.jsonl", "--out", "run", "--restart", "--json")
        assert restarted.returncode == 0, restarted.stderr
        assert server["requests"] == asked + 4  # every question asked again, of the edited file
    lines = [json.loads(line) for line in (tmp_path / "run" / "checkpoint.jsonl").read_text().splitlines()]
    assert [line["predictions"][0]["gold"] for line in lines if line["id"] == "q1"] == [["Somebody else"]]
    assert json.loads(restarted.stdout)["n"] == 4


def test_unchanged_questions_are_never_asked_again_and_questions_new_in_a_grown_run_are_checked_too(tmp_path):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=2)
        assert server["requests"] == 2
        report, _ = _run(server, tmp_path, "d.jsonl", out=tmp_path / "run")  # --limit 4 after --limit 2
        assert report.n == 4 and server["requests"] == 4  # only the two new questions were asked
        edited = [dict(row) for row in QUESTIONS]
        edited[3]["passages"] = ["Book 3 was written by Author 33."]
        _write_dataset(tmp_path / "d.jsonl", edited)
        with pytest.raises(InputError, match=r"other questions \(question q3's passages changed\)"):
            _run(server, tmp_path, "d.jsonl", out=tmp_path / "run")
        _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run")
        assert server["requests"] == 4


def test_a_run_json_of_the_previous_release_resumes_with_a_warning_and_is_checked_from_then_on(tmp_path, caplog):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    run_file = tmp_path / "run" / "run.json"
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3)
        older = {key: value for key, value in json.loads(run_file.read_text()).items()
                 if key in ("dataset", "methods", "metrics", "settings")}  # the shape the previous release wrote
        run_file.write_text(json.dumps(older, indent=2))
        with caplog.at_level(logging.WARNING):
            report, _ = _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3)
        assert report.n == 3 and server["requests"] == 3  # resumed: nothing asked again
        assert "written by an earlier tanglerag" in caplog.text
        assert set(json.loads(run_file.read_text())["questions"]) == {"q0", "q1", "q2"}
        edited = [dict(row) for row in QUESTIONS]
        edited[0]["answers"] = ["Another author"]
        _write_dataset(tmp_path / "d.jsonl", edited)
        with pytest.raises(InputError, match=r"question q0's gold answers changed"):
            _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3)
        run_file.write_text(json.dumps(older))  # an old run with other settings is still refused, saying which
        with pytest.raises(InputError, match=r"other settings \(settings\.retrieval\.top_k\)"):
            _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3, sets=("retrieval.top_k=3",))


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("damage, names", [
    ("checkpoint_folder", "checkpoint.jsonl is not a file"),
    ("run_list", "run.json is missing or damaged (a JSON list, not an object)"),
    ("run_deep", "run.json is missing or damaged (nested too deeply to read"),
    ("line_deep", "checkpoint.jsonl line 2 is damaged"),
])
def test_a_damaged_run_folder_is_one_line_naming_the_file(tmp_path, damage, names):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    run = tmp_path / "run"
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=run)
        checkpoint = (run / "checkpoint.jsonl").read_text().splitlines(keepends=True)
        if damage == "checkpoint_folder":
            (run / "checkpoint.jsonl").unlink()
            (run / "checkpoint.jsonl").mkdir()
        elif damage == "line_deep":
            (run / "checkpoint.jsonl").write_text(checkpoint[0] + DEEP + "\n" + "".join(checkpoint[1:]))
        else:
            (run / "run.json").write_text("[1, 2]" if damage == "run_list" else DEEP)
        _one_line(_cli(server, tmp_path, "--dataset", "d.jsonl", "--out", "run"), names)


def test_a_finished_run_is_not_overwritten_by_a_run_of_fewer_of_its_questions(tmp_path):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    outputs = ("results.json", "predictions.jsonl", "results.md")
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run")
        before = {name: (tmp_path / "run" / name).read_bytes() for name in outputs}
        for smaller in (["--head", "3"], ["--limit", "2"], ["--random", "2"]):
            _one_line(_cli(server, tmp_path, "--dataset", "d.jsonl", "--out", "run", *smaller),
                      "holds a finished run of 4 questions", "give another --out")
        assert {name: (tmp_path / "run" / name).read_bytes() for name in outputs} == before
        again = _cli(server, tmp_path, "--dataset", "d.jsonl", "--out", "run", "--json")
        assert again.returncode == 0 and json.loads(again.stdout)["n"] == 4  # the same run: its report again
        assert server["requests"] == 4


def test_a_checkpoint_line_of_a_method_the_run_does_not_have_is_reported_and_its_question_asked_again(
        tmp_path, caplog):
    _write_dataset(tmp_path / "d.jsonl", QUESTIONS)
    path = tmp_path / "run" / "checkpoint.jsonl"
    with fake_openai_server(_reply) as server:
        _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3)
        lines = path.read_text().splitlines(keepends=True)
        foreign = json.loads(lines[1])
        foreign["predictions"][0]["method"] = "corg"
        path.write_text(lines[0] + json.dumps(foreign) + "\n" + lines[2])
        with caplog.at_level(logging.WARNING):
            report, predictions = _run(server, tmp_path, "d.jsonl", out=tmp_path / "run", limit=3)
    said = f"checkpoint.jsonl line 2: question {foreign['id']} holds answers of corg, not of this run's methods (concat)"
    assert said in caplog.text
    assert server["requests"] == 4  # that question asked again, the others not
    assert report.n == 3 and [p.id for p in predictions] == ["q0", "q1", "q2"]


def _count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def test_ctrl_c_leaves_at_once_saying_what_is_saved_and_the_command_that_resumes(tmp_path):
    pace = [3.0]  # seconds each model call takes

    def slow(body: dict) -> str:
        time.sleep(pace[0])
        return "Author [1]"

    with fake_openai_server(slow) as server:
        sets = [part for value in _sets(server, tmp_path) for part in ("--set", value)]
        args = ["eval", "--dataset", "ramdocs-sample", "--methods", "concat", "--limit", "6", "--concurrency", "2",
                "--out", str(tmp_path / "run"), *sets]
        # SIGINT as a terminal's Ctrl-C delivers it: a shell runs a background job (CI's, say) with SIGINT ignored,
        # and a child started from it would inherit that
        process = subprocess.Popen([*HASHING_CLI, *args], cwd=tmp_path, env=ENV,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 180
        while _count_lines(tmp_path / "run" / "checkpoint.jsonl") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the next two questions' calls are in flight now, each with about 2.7 s to go
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        took = time.monotonic() - stopped
        saved = _count_lines(tmp_path / "run" / "checkpoint.jsonl")
        assert process.returncode == 130 and took < 1.5 and "Traceback" not in stderr, (took, stderr)
        said = [line for line in stderr.splitlines() if line.startswith("interrupted")]
        assert len(said) == 1, stderr
        match = re.fullmatch(r"interrupted \((\d+) of 6 questions answered\); the answers are saved in (.+); "
                             r"resume with: (.+)", said[0])
        assert match is not None and int(match[1]) == saved and match[2] == str(tmp_path / "run"), said
        command = shlex.split(match[3])
        assert command == ["tanglerag", *args]
        pace[0] = 0.0
        before = server["requests"]
        resumed = subprocess.run([*HASHING_CLI, *command[1:]], cwd=tmp_path, env=ENV,
                                 capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {saved} of 6 questions already answered" in resumed.stderr
    assert server["requests"] - before == 6 - saved and _count_lines(tmp_path / "run" / "checkpoint.jsonl") == 6


def test_a_stopped_engine_cancels_its_questions_in_flight_and_does_not_wait_for_them(tmp_path):
    """Post-fusion makes one call per passage, one after another (one slot): a question stopped mid-batch makes at
    most the call in progress, and closing the engine (what Ctrl-C and --fail-fast do) returns at once."""

    def slow(body: dict) -> str:
        time.sleep(0.3)
        return "Author"

    _, examples = load_dataset("ramdocs-sample", limit=6)
    with fake_openai_server(slow) as server:
        settings = Settings.load(overrides=[*_sets(server, tmp_path), "retrieval.top_k=3", "llm.concurrency=1"])
        worker = QuestionWorker(Runtime(settings, embedder=HashEmbedder()), ["post-fusion"], ["em"], examples)
        answers = answer_locally(worker, examples, concurrency=2)
        first = next(answers)
        assert not first.failed
        start = time.monotonic()
        answers.close()
        took = time.monotonic() - start
        at_close = server["requests"]
        time.sleep(1.5)  # a question that went on would make its remaining calls now
        after = server["requests"]
    assert took < 0.25, took
    assert after - at_close <= 2, (at_close, after)  # at most the calls already started (one slot, two threads)


def test_the_ctrl_c_line_says_what_is_kept_before_the_first_question_and_without_out(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["tanglerag", "eval", "--dataset", "my file.jsonl", "--out", "r", "--restart"])
    progress = RunProgress(quiet=True)
    assert progress.interrupted(Path("r")) == ("interrupted (before the first question); the answers are saved in r; "
                                               "resume with: tanglerag eval --dataset 'my file.jsonl' --out r")
    progress.started(5, 0)
    assert progress.interrupted(None).startswith("interrupted (0 of 5 questions answered); nothing is saved without")


def test_restart_without_an_out_folder_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tanglerag.cli", "eval", "--dataset", "ramdocs-sample", "--restart"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--restart discards the run an --out folder holds" in done.stderr, done.stderr
