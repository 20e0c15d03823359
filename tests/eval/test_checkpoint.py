"""An eval with ``out`` checkpoints each question: a killed run resumes with only the questions left."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tanglerag.datasets.registry import load_dataset
from tanglerag.errors import InputError
from tanglerag.eval.checkpoint import Checkpoint
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm, fake_openai_server

RUN = """
import sys
from pathlib import Path
from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder
_, examples = load_dataset("ramdocs-sample", limit=6)
settings = Settings.load(overrides=["llm.backend=openai", f"llm.base_url={sys.argv[1]}", "llm.cache=false",
                                    "retrieval.top_k=2", "eval.concurrency=1"])
EvalRunner(Runtime(settings, embedder=HashEmbedder())).run("ramdocs-sample", examples, ["concat"], out=Path(sys.argv[2]))
"""


def _reply(body: dict) -> str:
    return body["messages"][-1]["content"].split("Question:")[-1].strip()[:40] + " [1]"


def _runner(base_url: str, concurrency: int = 1) -> EvalRunner:
    settings = Settings.load(overrides=["llm.backend=openai", f"llm.base_url={base_url}", "llm.cache=false",
                                        "retrieval.top_k=2", f"eval.concurrency={concurrency}"])
    return EvalRunner(Runtime(settings, embedder=HashEmbedder()))


def _lines(path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_run_resumes_with_the_rest_only(tmp_path):
    _, examples = load_dataset("ramdocs-sample", limit=6)
    with fake_openai_server(_reply, delay_s=0.3) as server:
        out = tmp_path / "killed"
        process = subprocess.Popen([sys.executable, "-c", RUN, server["base_url"], str(out)])
        deadline = time.monotonic() + 60
        while _lines(out / "checkpoint.jsonl") < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        finished = _lines(out / "checkpoint.jsonl")
        assert 2 <= finished < 6
        before = server["requests"]
        # resumed in another way than it started (this process, 3 at a time): only the rest is asked for
        resumed, predictions = _runner(server["base_url"], concurrency=3).run("ramdocs-sample", examples, ["concat"],
                                                                              out=out)
        assert server["requests"] - before == 6 - finished
        whole, whole_predictions = _runner(server["base_url"]).run("ramdocs-sample", examples, ["concat"],
                                                                   out=tmp_path / "whole")
    assert resumed.n == whole.n == 6 and resumed.results[0].metrics == whole.results[0].metrics
    assert [(p.id, p.answer, p.citations) for p in predictions] == [(p.id, p.answer, p.citations)
                                                                    for p in whole_predictions]
    assert _lines(out / "checkpoint.jsonl") == 6


def _canned_run(tmp_path, *sets: str, reply: str = "3,559 people [1]", limit: int = 3):
    _, examples = load_dataset("ramdocs-sample", limit=limit)
    runtime = Runtime(Settings.load(overrides=["retrieval.top_k=2", *sets]), llm=canned_llm(default=reply),
                      embedder=HashEmbedder())
    return EvalRunner(runtime).run("ramdocs-sample", examples, ["concat"], out=tmp_path / "run")


def test_a_run_with_other_settings_is_refused_and_nothing_is_lost(tmp_path):
    _canned_run(tmp_path)
    stored = (tmp_path / "run" / "checkpoint.jsonl").read_bytes()
    with pytest.raises(InputError, match=r"holds a run with other settings \(settings\.retrieval\.top_k\)"):
        _canned_run(tmp_path, "retrieval.top_k=3")
    assert (tmp_path / "run" / "checkpoint.jsonl").read_bytes() == stored
    report, _ = _canned_run(tmp_path, "eval.concurrency=3", "llm.timeout_s=5")  # how it runs may change
    assert report.n == 3


def test_a_run_on_own_passages_grows_and_keeps_its_answers_while_a_pooled_one_is_refused(tmp_path):
    _canned_run(tmp_path, limit=2)
    answered = (tmp_path / "run" / "checkpoint.jsonl").read_text()
    report, predictions = _canned_run(tmp_path, reply="unknown", limit=4)  # more questions: only new ones asked
    assert report.n == 4 and (tmp_path / "run" / "checkpoint.jsonl").read_text().startswith(answered)
    assert [p.answer.startswith("3,559") for p in predictions] == [True, True, False, False]
    pooled = tmp_path / "pooled"
    _canned_run(pooled, "eval.passage_scope=pooled", limit=2)
    with pytest.raises(InputError, match=r"other settings \(pool\)"):  # every question's passages are retrieved from
        _canned_run(pooled, "eval.passage_scope=pooled", limit=4)


def test_a_run_written_before_a_setting_existed_resumes_while_that_setting_keeps_its_default(tmp_path):
    _canned_run(tmp_path)
    run_file = tmp_path / "run" / "run.json"
    older = json.loads(run_file.read_text())
    del older["settings"]["llm"]["structured_stages"]  # as a run written before the setting was added
    run_file.write_text(json.dumps(older))
    report, _ = _canned_run(tmp_path)
    assert report.n == 3
    with pytest.raises(InputError, match=r"other settings \(settings\.llm\.structured_stages\)"):
        _canned_run(tmp_path, "llm.structured_stages.generate=on")


def test_settings_of_methods_the_run_does_not_have_do_not_stop_it_resuming(tmp_path):
    _canned_run(tmp_path, "auto.routes.clean=corg")
    older = tmp_path / "run" / "run.json"
    assert "auto" not in json.loads(older.read_text())["settings"]
    report, _ = _canned_run(tmp_path, "auto.routes.clean=separate", "madam.rounds=1")  # concat reads neither
    assert report.n == 3
    stored = json.loads(older.read_text())  # written before such sections were left out: they are ignored too
    older.write_text(json.dumps({**stored, "settings": {**stored["settings"], "auto": {"routes": {"clean": "x"}}}}))
    assert _canned_run(tmp_path)[0].n == 3


def test_a_run_that_recorded_a_section_eval_does_not_read_resumes(tmp_path):
    _canned_run(tmp_path)
    run_file = tmp_path / "run" / "run.json"
    stored = json.loads(run_file.read_text())
    assert "conversation" not in stored["settings"]  # follow-ups are rewritten in chat, never in eval
    older = {"max_turns": 2, "rewrite": "auto", "rewrite_tokens": 96, "turn_words": 80}  # as written before that
    run_file.write_text(json.dumps({**stored, "settings": {**stored["settings"], "conversation": older}}))
    assert _canned_run(tmp_path)[0].n == 3


def test_index_settings_do_not_stop_a_run_on_own_passages_resuming(tmp_path):
    _canned_run(tmp_path, limit=2)
    run_file = tmp_path / "run" / "run.json"
    stored = json.loads(run_file.read_text())
    assert "index" not in stored["settings"]  # each question's passages are ranked in a flat index of their own
    written_before = {"index_type": "flat", "pq_refine": 16, "ivf_nprobe": 0}  # as runs recorded it, older default
    run_file.write_text(json.dumps({**stored, "settings": {**stored["settings"], "index": written_before}}))
    assert _canned_run(tmp_path, "index.pq_refine=8")[0].n == 3


def test_a_line_torn_by_a_kill_is_dropped_and_that_question_answered_again(tmp_path):
    _canned_run(tmp_path)
    path = tmp_path / "run" / "checkpoint.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[1][:30])  # the kill came while the second question was being written
    report, predictions = _canned_run(tmp_path)
    assert report.n == 3 and [QuestionResult.model_validate_json(x).id for x in path.read_text().splitlines()] == [
        "ramdocs-0000", "ramdocs-0001", "ramdocs-0002"]
    path.write_text(lines[0][:30] + "\n" + lines[1])  # damage inside the file is reported, not overwritten
    with pytest.raises(InputError, match="checkpoint.jsonl line 1 is damaged"):
        _canned_run(tmp_path)
    assert path.read_text() == lines[0][:30] + "\n" + lines[1]


def test_failed_questions_are_tried_again_on_resume(tmp_path):
    _canned_run(tmp_path)
    path = tmp_path / "run" / "checkpoint.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    failed = json.dumps({"id": json.loads(lines[0])["id"], "error": "LLMError: busy"}) + "\n"
    path.write_text(failed + "".join(lines[1:]))
    report, predictions = _canned_run(tmp_path)
    assert report.n == 3 and not report.failed and predictions[0].trace.calls  # answered now, in dataset order
    assert path.read_text().splitlines(keepends=True)[:3] == [failed, *lines[1:]]  # only it was asked again
    assert json.loads(path.read_text().splitlines()[3])["id"] == json.loads(lines[0])["id"]


def test_a_second_eval_on_the_same_folder_is_refused_while_the_first_runs(tmp_path):
    with Checkpoint(tmp_path / "run", {"same": 1}), pytest.raises(InputError, match="another eval is writing to"):
        _canned_run(tmp_path)
    report, _ = _canned_run(tmp_path)  # the first one finished: the folder is free again
    assert report.n == 3


def test_questions_that_finished_together_are_synced_once_and_each_is_on_disk_before_it_is_reported(tmp_path,
                                                                                                      monkeypatch):
    syncs, path = [], tmp_path / "run" / "checkpoint.jsonl"
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if path.exists() and os.fstat(fd).st_ino == path.stat().st_ino:
            syncs.append(len(path.read_text().splitlines()))

    monkeypatch.setattr(os, "fsync", fsync)
    answered = threading.Semaphore(0)

    def reply(messages) -> str:
        answered.release()
        return "3,559 people [1]"

    class Listener:
        def __init__(self) -> None:
            self.reported: list[str] = []

        def started(self, total: int, already_answered: int) -> None: ...

        def finished(self, result: QuestionResult) -> None:
            if not self.reported:  # meanwhile every other question finishes: they come next, together
                for _ in range(6):
                    answered.acquire(timeout=30)
                time.sleep(1.0)
            synced = path.read_text().splitlines()[:syncs[-1] if syncs else 0]
            assert any(result.id in line for line in synced)  # durable before it is reported
            self.reported.append(result.id)

    _, examples = load_dataset("ramdocs-sample", limit=6)
    runtime = Runtime(Settings.load(overrides=["retrieval.top_k=2", "eval.concurrency=6"]),
                      llm=canned_llm(responder=reply), embedder=HashEmbedder())
    listener = Listener()
    report, _ = EvalRunner(runtime).run("ramdocs-sample", examples, ["concat"], out=tmp_path / "run", listener=listener)
    assert report.n == 6 and sorted(listener.reported) == sorted(ex.id for ex in examples)
    # those that finished first, then the rest, finished meanwhile: fewer syncs than questions (2 when the machine
    # lets the other five finish within the second the listener waits; one a question if they were not grouped)
    assert len(syncs) < 6 and syncs[-1] == 6


def test_the_checkpoint_is_opened_once_for_the_run_and_closed_with_it(tmp_path, monkeypatch):
    opened, path = [], tmp_path / "run" / "checkpoint.jsonl"
    real_open = os.open

    def counting_open(file, *args, **kwargs):
        if os.fspath(file) == os.fspath(path):
            opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    report, _ = _canned_run(tmp_path, "eval.concurrency=1", limit=4)  # one question at a time: four appends
    assert report.n == 4 and len(path.read_text().splitlines()) == 4 and len(opened) == 1
    held = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")]
    assert str(path) not in held  # closed with the run
    again, _ = _canned_run(tmp_path, "eval.concurrency=1", limit=5)  # resumed: one more, appended after the four
    assert again.n == 5 and len(path.read_text().splitlines()) == 5
