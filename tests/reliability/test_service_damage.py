"""Bad bodies, damaged run files and clients that leave, against the real service over the wire (issue 49): a lone
surrogate is a 400 naming the field, a run with bytes that are not UTF-8 is one error naming its file and line while
the other runs still open, and a client leaving mid-stream is one INFO line, never an ERROR with a traceback."""

from __future__ import annotations

import asyncio
import gc
import logging
import shutil
import time

import httpx
import pytest

from tanglerag.testing import CannedBackend
from tests.eval.run_folders import write_run
from tests.reliability.serving import served
from tests.service.conftest import make_runtime

NOT_TEXT = "not valid Unicode text (a lone surrogate such as \\ud800)"
JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(("method", "path", "body", "field"), [
    ("POST", "/v1/ask", r'{"question": "Paris\ud800?"}', "question"),
    ("POST", "/v1/ask", r'{"question": "Paris?", "\ud800": 1}', "\\ud800 (a key)"),
    ("POST", "/v1/chat/completions", r'{"model": "tanglerag/concat", "messages": [{"role": "user", "content": "\udc00"}]}',
     "messages.0.content"),
    ("POST", "/v1/chat/completions", r'{"model": "tanglerag/\ud800", "messages": [{"role": "user", "content": "a"}]}',
     "model"),
    ("POST", "/v1/index/documents", '{"id": "a", "text": "fine"}\n{"id": "b", "text": "bad \\ud800"}\n', "line 2: text"),
    ("PUT", "/v1/index/documents/x", r'{"text": "text", "title": "\udbff"}', "title"),
    ("POST", "/v1/users/alice/contexts", r'{"contexts": ["fine", "\ud800"]}', "contexts.1"),
])
def test_a_lone_surrogate_in_a_json_body_is_a_400_naming_the_field(tmp_path, method, path, body, field):
    with served(make_runtime(tmp_path)) as url:
        r = httpx.request(method, f"{url}{path}", content=body.encode(), headers=JSON)
        healthy = httpx.get(f"{url}/healthz").status_code
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    message = error["message"] if path == "/v1/chat/completions" else error  # OpenAI's shape on its routes
    assert message.startswith(f"{field}: {NOT_TEXT}"), message
    assert healthy == 200


def test_an_uploaded_file_with_a_lone_surrogate_names_the_document(tmp_path):
    upload = b'{"id": "notes", "text": "fine"}\n{"id": "bad", "text": "a\\ud800b"}\n'
    with served(make_runtime(tmp_path)) as url:
        r = httpx.post(f"{url}/v1/index/documents", files={"files": ("more.jsonl", upload)})
        total = httpx.get(f"{url}/v1/index").json()["manifest"]["count"]
    assert r.status_code == 400  # named as the CLI and the Python API name it (issue 68): file, line and field
    assert r.json()["error"].startswith("more.jsonl:2: field 'text' holds a lone surrogate")
    assert total == 3  # nothing of the upload was stored


def test_a_surrogate_pair_is_text_and_is_kept(tmp_path):
    with served(make_runtime(tmp_path)) as url:
        added = httpx.post(f"{url}/v1/users/alice/contexts", content=rb'{"contexts": ["I like \ud83d\ude00"]}',
                           headers=JSON)
    assert added.status_code == 201 and added.json()[0]["text"] == "I like \U0001f600"


def test_a_run_with_bytes_that_are_not_utf8_is_one_error_and_the_other_runs_still_open(tmp_path):
    good = write_run(tmp_path / "runs" / "good")
    broken = shutil.copytree(good, tmp_path / "runs" / "broken")
    whole = (broken / "predictions.jsonl").read_bytes()
    lines = whole.splitlines(keepends=True)
    lines[2] = lines[2][:40] + b"\xff\xfe" + lines[2][40:]
    (broken / "predictions.jsonl").write_bytes(b"".join(lines))
    with served(make_runtime(tmp_path), runs_dir=tmp_path / "runs") as url:
        listed = httpx.get(f"{url}/v1/runs")
        grid = httpx.get(f"{url}/v1/runs/broken/grid")
        question = httpx.get(f"{url}/v1/runs/broken/question", params={"id": "0"})
        others = [httpx.get(f"{url}{path}") for path in ("/v1/runs/good/grid", "/runs", "/healthz")]
        (broken / "predictions.jsonl").write_bytes(whole)  # restored: the run opens again
        repaired = httpx.get(f"{url}/v1/runs/broken/grid")
    assert listed.status_code == 200 and {run["name"] for run in listed.json()} == {"good", "broken"}
    for r in (grid, question):
        assert r.status_code == 409, r.text
        message = r.json()["error"]
        assert message.startswith("run 'broken': predictions.jsonl line 3 is not UTF-8 text (byte 41 of the line)")
        assert "\n" not in message and str(tmp_path) not in message
    assert [r.status_code for r in others] == [200, 200, 200] and repaired.status_code == 200


def _slow_reply(messages) -> str:
    time.sleep(0.4)
    return "Paris [1]"


def test_a_client_leaving_mid_stream_is_one_info_line_not_an_error(tmp_path, caplog):
    """post-fusion makes one call per passage (3, 0.4 s each): each client leaves as that stage starts, so its
    question is cancelled before its next call."""
    runtime = make_runtime(tmp_path, backend=CannedBackend(responder=_slow_reply))
    asks = [("/v1/ask?stream=true", {"question": "capital of France?", "method": "post-fusion"}),
            ("/v1/chat/completions", {"model": "tanglerag/post-fusion", "stream": True,
                                      "messages": [{"role": "user", "content": "capital of France?"}]})]
    with caplog.at_level(logging.INFO), served(runtime) as url:
        for path, body in asks:
            with httpx.stream("POST", f"{url}{path}", json=body) as r:
                next(line for line in r.iter_lines() if "post_fusion" in line)  # then the client leaves
        deadline = time.monotonic() + 20
        while "tanglerag_abandoned_questions_total 2.0" not in (metrics := httpx.get(f"{url}/metrics").text):
            assert time.monotonic() < deadline, [m for m in metrics.splitlines() if m.startswith("tanglerag_aband")]
            time.sleep(0.1)
        gc.collect()  # asyncio logs a future's unread exception when the future is collected
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    left = [r for r in caplog.records if "abandoned" in r.getMessage()]
    assert len(left) == 2, [r.getMessage() for r in left]
    for record in left:
        assert record.levelno == logging.INFO and record.exc_info is None and "\n" not in record.getMessage()
        assert "cancelled" in record.getMessage()


def test_an_abandoned_question_says_whether_it_was_stopped_or_had_done_its_work(caplog):
    from tanglerag.service.answering import _log_abandoned

    loop = asyncio.new_event_loop()
    try:
        stopped, done = loop.create_future(), loop.create_future()
        stopped.cancel()
        done.set_result(None)
        with caplog.at_level(logging.INFO):
            _log_abandoned(stopped)
            _log_abandoned(done)
    finally:
        loop.close()
    said = [r.getMessage().split(": ", 1)[1] for r in caplog.records]
    assert said == ["it was stopped", "its last model call had already ended"]
