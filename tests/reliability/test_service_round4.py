"""The service against a hostile caller (issue 59, round 4), on the real server: an upload a loader cannot read is a
400 naming the file and is read off the event loop within a time bound; NaN, Infinity and huge integers are refused
naming the field; a user key's CDIT question leaves the served index folder as it was; every text a passage shows is
clipped; chat roles are OpenAI's; an error names the field the client sent; a raw prompt shaped as a chat client's
background task reaches the model only where the operator opted in; the run browser clips long fields."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from pathlib import Path

import docx
import httpx
import openai
import pypdf
import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.loaders.base import LOADERS, Loaded, Segment
from tanglerag.service.auth import ApiKeys
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage
from tests.eval.run_folders import write_run
from tests.reliability.serving import served
from tests.service.conftest import ADMIN, ALICE, bearer, make_runtime
from tests.service.test_background_tasks import TITLE

PDF = (Path(__file__).parents[1] / "data" / "documents" / "reportlab-userguide-p6-11.pdf").read_bytes()
ASK = "What is the capital of France?"
HUGE = "9" * 5000


def _cut_word_file() -> bytes:
    """A Word file whose document.xml stops halfway (lxml refuses it)."""
    document, whole = docx.Document(), io.BytesIO()
    document.add_paragraph("Staff take five days of leave.")
    document.save(whole)
    package, cut = zipfile.ZipFile(io.BytesIO(whole.getvalue())), io.BytesIO()
    with zipfile.ZipFile(cut, "w") as out:
        for item in package.infolist():
            body = package.read(item)
            out.writestr(item, body[:len(body) // 2] if item.filename == "word/document.xml" else body)
    return cut.getvalue()


def _odd_encryption_pdf() -> bytes:
    """A PDF encrypted by a security handler pypdf does not implement (it raises NotImplementedError)."""
    writer, out = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(PDF))), io.BytesIO()
    writer.encrypt("", algorithm="RC4-128")
    writer.write(out)
    return out.getvalue().replace(b"/Standard", b"/Standarx")


@pytest.fixture
def failing_loader():
    """A plug-in loader (``.weird``) with a bug: it raises an error no loader declares."""
    def load(name: str, data: bytes) -> Loaded:
        raise RuntimeError("plug-in bug at /srv/secret/plugin.py")
    LOADERS.register("weird", load)
    yield
    LOADERS.remove("weird")


class SlowLoader:
    """A ``.slow`` loader that holds its worker until released (a 100,000-page PDF, alias-bombed front matter)."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()

    def __call__(self, name: str, data: bytes) -> Loaded:
        self.started.set()
        self.release.wait(20)
        return Loaded(segments=[Segment(text="Lisbon is the capital of Portugal.")])


@pytest.fixture
def slow_loader():
    loader = SlowLoader()
    LOADERS.register("slow", loader)
    yield loader
    loader.release.set()
    LOADERS.remove("slow")


def _upload(url: str, name: str, data: bytes) -> httpx.Response:
    return httpx.post(f"{url}/v1/index/documents", files=[("files", (name, data, "application/octet-stream"))],
                      timeout=30)


FAILED_LOADER = "notes.weird: cannot be read (its loader failed: RuntimeError; the server's log has the details)"


def test_an_upload_a_loader_cannot_read_is_a_400_naming_the_file_and_why(tmp_path, failing_loader):
    with served(make_runtime(tmp_path)) as url:
        manifest = httpx.get(f"{url}/v1/index").json()
        for name, data, why in [("hr/cut.docx", _cut_word_file(), "hr/cut.docx: "),
                                ("odd.pdf", _odd_encryption_pdf(), "odd.pdf: "),
                                ("notes.weird", b"any bytes", FAILED_LOADER)]:
            r = _upload(url, name, data)
            assert r.status_code == 400, (name, r.status_code, r.text)
            assert r.json()["error"].startswith(why) and "\n" not in r.json()["error"], r.text
            assert "/srv/secret" not in r.text
        assert httpx.get(f"{url}/v1/index").json() == manifest  # nothing stored


def test_healthz_answers_while_an_upload_is_being_read(tmp_path, slow_loader):
    with served(make_runtime(tmp_path)) as url:
        upload: dict[str, httpx.Response] = {}
        sender = threading.Thread(target=lambda: upload.update(r=_upload(url, "atlas.slow", b"pages")))
        sender.start()
        assert slow_loader.started.wait(10)
        health = httpx.get(f"{url}/healthz", timeout=3)  # on the event loop the read would hold this for 20 s
        assert not upload, "the upload ended before the loader was released"
        slow_loader.release.set()
        sender.join(30)
    assert health.status_code == 200 and upload["r"].status_code == 200, upload["r"].text


def test_an_upload_not_read_within_its_time_bound_is_refused_naming_the_file(tmp_path, slow_loader):
    runtime = make_runtime(tmp_path, overrides=["service.upload_timeout_s=0.5"])
    with served(runtime) as url:
        manifest = httpx.get(f"{url}/v1/index").json()
        r = _upload(url, "atlas.slow", b"pages")
        assert r.status_code == 413 and r.json()["error"].startswith("atlas.slow: not read within 0.5 s"), r.text
        assert "service.upload_timeout_s" in r.json()["error"]
        slow_loader.release.set()  # its thread ends; the next upload gets the reading slot
        after = _upload(url, "fine.txt", b"Rome is the capital of Italy.")
        assert after.status_code == 200, after.text
        assert after.json()["total"] == manifest["manifest"]["count"] + 1


@pytest.mark.parametrize(("body", "field"), [
    ('{"question": "Q", "top_k": NaN}', "top_k"),
    ('{"question": "Q", "options": {"methods.sample_temperature": Infinity}}', "options.methods.sample_temperature"),
    ('{"question": "Q", "options": {"no.such_option": -Infinity}}', "options.no.such_option"),
    ('{"question": "Q", "history": [{"role": "user", "content": "x"}], "top_k": [1, NaN]}', "top_k.1"),
    ('{"question": "Q", "top_k": 1' + "0" * 400 + '.0}', "top_k")])  # a plain decimal past 1.8e308
def test_a_non_finite_number_is_a_400_naming_the_field(tmp_path, body, field):
    with served(make_runtime(tmp_path)) as url:
        r = httpx.post(f"{url}/v1/ask", content=body.replace('"Q"', json.dumps(ASK)),
                       headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["error"].startswith(f"{field}: not a finite number"), r.text


def test_non_finite_numbers_are_refused_on_every_json_route_and_text_saying_nan_is_not(tmp_path):
    chat = '{"model": "tanglerag/concat", "temperature": NaN, "messages": [{"role": "user", "content": "Q"}]}'
    with served(make_runtime(tmp_path)) as url:
        r = httpx.post(f"{url}/v1/chat/completions", content=chat.replace('"Q"', json.dumps(ASK)),
                       headers={"Content-Type": "application/json"})
        fine = httpx.post(f"{url}/v1/ask", json={"question": "Is NaN or Infinity the capital of France?"})
        jsonl = httpx.post(f"{url}/v1/index/documents", content=b'{"id": "a", "text": "t"}\n{"id": "b", "text": '
                           b'"t", "meta": {"score": NaN}}\n', headers={"Content-Type": "application/x-ndjson"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "temperature", r.text
    assert r.json()["error"]["message"].startswith("temperature: not a finite number")
    assert fine.status_code == 200, fine.text
    assert jsonl.status_code == 400 and jsonl.json()["error"].startswith("line 2: meta.score: not a finite number")


def test_a_huge_integer_is_refused_in_the_projects_own_words(tmp_path):
    with served(make_runtime(tmp_path)) as url:
        asked = httpx.post(f"{url}/v1/ask", content=f'{{"question": "{ASK}", "top_k": {HUGE}}}',
                           headers={"Content-Type": "application/json"})
        chat = httpx.post(f"{url}/v1/chat/completions", content=(
            f'{{"model": "tanglerag/concat", "n": {HUGE}, "messages": [{{"role": "user", "content": "{ASK}"}}]}}'),
            headers={"Content-Type": "application/json"})
        record = f'{{"id": "b", "text": "t", "meta": {{"n": {HUGE}}}}}\n'
        body = httpx.post(f"{url}/v1/index/documents", content='{"id": "a", "text": "t"}\n' + record,
                          headers={"Content-Type": "application/x-ndjson"})
        upload = httpx.post(f"{url}/v1/index/documents", files={"files": ("big.jsonl", record.encode())})
    assert asked.status_code == 400 and asked.json()["error"].startswith("top_k: an integer of 5000 digits"), asked.text
    assert chat.status_code == 400 and chat.json()["error"]["param"] == "n", chat.text
    assert body.status_code == 400 and body.json()["error"].startswith("line 2: meta.n: an integer of 5000 digits")
    assert upload.status_code == 400 and upload.json()["error"].startswith("big.jsonl:1: an integer of 5000 digits")
    for seen in (asked.text, chat.text, body.text, upload.text):
        assert "sys.set_int_max_str_digits" not in seen and "too long to read (at most 4300)" in seen, seen


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_user_keys_cdit_question_leaves_the_served_index_folder_as_it_was(tmp_path):
    judge = CannedBackend([("Passage: Paris", "True"), ("Passage: (Berlin|Madrid)", "False"),
                           ("capital of France", "Paris [1]")], default="unknown")
    runtime = make_runtime(tmp_path, backend=judge)
    keys = ApiKeys.load(env=f"{ADMIN},{ALICE}=alice")
    before = _files(tmp_path / "index")
    with served(runtime, keys) as url:
        for _ in range(2):  # two witnesses would separate a pair (cdit.witnesses=2)
            r = httpx.post(f"{url}/v1/ask", json={"question": ASK, "method": "cdit"}, headers=bearer(ALICE))
            assert r.status_code == 200 and r.json()["answer"] == "Paris [1]", r.text
            assert {s["passage_id"]: s["consistent"] for s in r.json()["trace"]["steps"][0]["judgments"]} == {
                "p1": True, "p2": False, "p3": False}  # CDIT ran in full, its determiner in memory
        assert _files(tmp_path / "index") == before, "a user's question wrote into the served index"
        admin = httpx.post(f"{url}/v1/ask", json={"question": ASK, "method": "cdit"}, headers=bearer(ADMIN))
    assert admin.status_code == 200 and (tmp_path / "index" / "trim_log.jsonl").exists()  # the operator's key records


def test_every_text_of_a_passage_is_clipped_over_http(tmp_path):
    runtime = make_runtime(tmp_path, with_index=False, overrides=["service.max_passage_chars=100"])
    store_passages(runtime.index_dir, [Passage(id="big", title="Paris", text="Paris is the capital of France.",
                                               metadata={"source": "s" * 1_000_000, "section": ["h" * 500]})],
                   runtime.embedder, runtime.settings.index)
    chat_body = {"model": "tanglerag/concat", "messages": [{"role": "user", "content": ASK}]}
    with served(runtime) as url:
        asked = httpx.post(f"{url}/v1/ask", json={"question": ASK}).json()
        chat = httpx.post(f"{url}/v1/chat/completions", json=chat_body).json()
    shown = asked["passages"][0]
    assert shown["source"].startswith("s" * 100 + " [... 999900 more characters not shown"), shown["source"][:200]
    assert len(shown["section"][0]) < 200 and len(shown["location"]) < 300
    assert chat["choices"][0]["message"]["sources"][0]["source"] == shown["source"]


def test_a_chat_role_openai_does_not_have_is_a_400(tmp_path):
    with served(make_runtime(tmp_path)) as url:
        sdk = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.BadRequestError) as refused:
            sdk.chat.completions.create(model="tanglerag/concat",  # type: ignore[misc, list-item]
                                        messages=[{"role": "hacker", "content": ASK}])
        for role in ("system", "developer"):
            ok = sdk.chat.completions.create(model="tanglerag/concat", messages=[
                {"role": role, "content": "Answer briefly."}, {"role": "user", "content": ASK}])
            assert ok.choices[0].message.content.startswith("Paris")
    body = refused.value.body
    assert body["param"] == "messages.0.role" and body["code"] == "invalid_value", body
    assert "'user'" in body["message"] and "'developer'" in body["message"]


@pytest.mark.parametrize(("message", "param"), [({"role": "user", "content": 5}, "messages.0.content"),
                                                ({"role": "user", "content": True}, "messages.0.content")])
def test_an_error_names_the_field_the_client_sent(tmp_path, message, param):
    with served(make_runtime(tmp_path)) as url:
        chat = httpx.post(f"{url}/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [message]})
        choice = httpx.post(f"{url}/v1/chat/completions", json={
            "model": "tanglerag/concat", "tool_choice": 5, "messages": [{"role": "user", "content": ASK}]})
        asked = httpx.post(f"{url}/v1/ask", json={"question": ASK, "top_k": "3"})
    assert chat.status_code == 400 and chat.json()["error"]["param"] == param, chat.text
    assert chat.json()["error"]["message"].startswith(f"{param}: "), chat.text
    assert choice.json()["error"]["param"] == "tool_choice", choice.text
    assert asked.status_code == 422 and asked.json()["error"].startswith("top_k: "), asked.text


def test_a_background_task_prompt_reaches_the_model_only_where_the_operator_opts_in(tmp_path):
    backend = CannedBackend([("### Task:", '{"title": "whatever the prompt asked"}')], default="unknown")
    body = {"model": "tanglerag/concat", "messages": [{"role": "user", "content": TITLE}]}
    with served(make_runtime(tmp_path, backend=backend)) as url:  # the default settings
        r = httpx.post(f"{url}/v1/chat/completions", json=body)
    assert r.status_code == 200 and json.loads(r.json()["choices"][0]["message"]["content"]) == {
        "title": "Who composed String Quintet No"}
    assert backend.requests == []  # no raw prompt went to the model
    with served(make_runtime(tmp_path / "on", backend=backend, overrides=["service.background_tasks=model"])) as url:
        opted = httpx.post(f"{url}/v1/chat/completions", json=body)
    assert json.loads(opted.json()["choices"][0]["message"]["content"]) == {"title": "whatever the prompt asked"}


def test_the_run_browser_clips_a_long_question(tmp_path):
    run = write_run(tmp_path / "runs" / "big")
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    huge = "Who is it? " + "x" * 5_000_000
    (run / "predictions.jsonl").write_text("".join(
        json.dumps(r | {"question": huge, "gold": [huge]} if r["id"] == records[0]["id"] else r) + "\n"
        for r in records))
    runtime = make_runtime(tmp_path, overrides=["service.max_passage_chars=1000"])
    with served(runtime, runs_dir=tmp_path / "runs") as url:
        r = httpx.get(f"{url}/v1/runs/big/question", params={"id": records[0]["id"]}, timeout=30)
    assert r.status_code == 200, r.text[:300]
    assert len(r.content) < 200_000 and r.json()["question"].startswith("Who is it? x")
    assert r.json()["question"].endswith("more characters not shown: service.max_passage_chars]")
    assert r.json()["gold"][0] == r.json()["question"]
