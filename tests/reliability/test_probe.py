"""The hostile-user probe of issue 25, kept as tests: every reachable input is one clear line, never a traceback;
a full disk loses nothing; every cost knob has a ceiling; keys, stores and health leak nothing."""

import json
import os
import stat
import time

import httpx
import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.config import IndexConfig
from tanglerag.errors import ConfigError, ContextStoreError, DiskFullError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.cache import CallCache
from tanglerag.llm.openai_compat import OpenAICompatBackend
from tanglerag.service.auth import ApiKeys
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, fake_openai_server
from tanglerag.types import Passage
from tests.llm.test_openai_compat import MSGS
from tests.reliability.conftest import fill
from tests.service.conftest import client_for, make_runtime

runner = CliRunner()
DEEP = "[" * 100_000 + "]" * 100_000


def _one_clear_line(result, fragment: str) -> None:
    assert isinstance(result.exception, SystemExit) and result.exit_code == 2, result.exception
    assert "Traceback" not in result.output and fragment in " ".join(result.output.split()), result.output


@pytest.fixture
def files(tmp_path):
    (tmp_path / "deep.jsonl").write_text('{"id": "a", "text": "x", "metadata": {"k": ' + DEEP + "}}\n")
    (tmp_path / "deep_qa.jsonl").write_text('{"question": "q", "answers": ["a"], "x": ' + DEEP + "}\n")
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 au lait")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\xff" * 50)
    (tmp_path / "folder").mkdir()
    (tmp_path / "a_file").write_text("x")
    return tmp_path


@pytest.mark.parametrize("args, fragment", [
    (["index", "deep.jsonl", "--out", "i"], "deep.jsonl:1: nested too deeply"),
    (["eval", "--dataset", "deep_qa.jsonl"], "nested too deeply"),
    (["trace", "show", "deep.json"], "nested too deeply"),
    (["index", "binary.txt", "--out", "i"], "binary.txt: looks binary"),
    (["eval", "--dataset", "folder"], "folder is a folder; give a dataset file"),
    (["ask", "q?", "--index", "i", "-c", "folder"], "is a folder; give a YAML file"),
    (["eval", "--dataset", "ramdocs-sample", "--out", "a_file"], "--out a_file is a file"),
    (["ask", "q?", "--index", "i", "--set", "llm=3", "--set", "llm.backend=openai"], "'llm=3': llm is a section"),
    (["ask", "q?", "--index", "i", "--top-k", "100000"], "less than or equal to 100"),
    (["eval", "--dataset", "ramdocs-sample", "--samples", "64"], "less than or equal to 16"),
])
def test_reachable_inputs_are_one_clear_line(files, monkeypatch, args, fragment):
    monkeypatch.chdir(files)
    cache = [] if args[0] == "trace" else ["--set", f"cache_dir={files / 'cache'}"]
    _one_clear_line(runner.invoke(app, [*args, *cache]), fragment)


def test_per_question_options_cannot_pass_the_ceilings(tmp_path):
    with client_for(make_runtime(tmp_path)) as client:
        for options in ({"retrieval.top_k": 100000}, {"methods.samples": 64}, {"methods.answer_tokens": 10**6}):
            r = client.post("/v1/ask", json={"question": "capital of France?", "options": options})
            assert r.status_code == 422 and "less than or equal" in r.json()["error"], (options, r.text)


def test_a_damaged_user_store_names_its_file_and_damaged_vectors_are_rebuilt(tmp_path):
    store = UserContextStore(tmp_path, HashEmbedder())
    store.add("ana", ["I live in Lyon", "I am vegetarian"])
    (tmp_path / "ana" / "vectors.npy").write_bytes(b"not numpy")
    contexts, vectors = store.vectors("ana")  # derived data: embedded again from the texts
    assert len(contexts) == 2 and vectors.shape == (2, HashEmbedder().dimension)
    (tmp_path / "ana" / "contexts.json").write_text('{"user": "ana", "contexts": 5}')
    with pytest.raises(ContextStoreError, match=r"ana/contexts.json is damaged .*move it aside"):
        store.list("ana")


def test_removing_an_unknown_context_creates_nothing(tmp_path):
    with pytest.raises(ContextStoreError, match="has no context with id"):
        UserContextStore(tmp_path, HashEmbedder()).remove("nobody", "abc")
    assert list(tmp_path.iterdir()) == []


def test_user_stores_and_the_llm_cache_are_private(tmp_path):
    UserContextStore(tmp_path / "users", HashEmbedder()).add("ana", ["a fact"])
    cache = CallCache(tmp_path / "cache" / "llm.sqlite3")
    cache.get("k")
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(tmp_path / "users" / "ana") == 0o700
    assert {mode(p) for p in (tmp_path / "users" / "ana").glob("*.*") if p.name != ".lock"} == {0o600}
    assert mode(tmp_path / "cache") == 0o700 and mode(tmp_path / "cache" / "llm.sqlite3") == 0o600


def test_a_cache_dir_that_cannot_exist_still_answers(tmp_path, caplog):
    from tanglerag.llm.factory import build_llm
    from tanglerag.testing import CannedBackend

    settings = Settings.load(None, ["cache_dir=/proc/nope"])
    assert build_llm(settings.llm, settings.cache_dir, CannedBackend(default="ok")).complete(MSGS).text == "ok"
    assert "cannot be written" in caplog.text


def test_a_blank_user_after_the_equals_sign_is_refused_not_made_admin():
    with pytest.raises(ConfigError, match="no user"):
        ApiKeys.load(env="k" * 20 + "= ")
    with pytest.raises(ConfigError, match="invalid user id"):
        ApiKeys.load(env="k" * 20 + "=../etc")


def test_health_does_not_show_the_llm_server_address(tmp_path):
    runtime = make_runtime(tmp_path, backend=OpenAICompatBackend("http://10.1.2.3:9999/v1", "served"))
    with client_for(runtime) as client:
        body = client.get("/healthz").text
    assert "10.1.2.3" not in body and json.loads(body)["model"] == "served"


def test_usage_of_the_wrong_shape_counts_as_absent():
    reply = {"choices": [{"message": {"content": "hi"}}], "usage": [1, 2]}
    with fake_openai_server(lambda b: "", payload=lambda b: reply) as server:
        done = OpenAICompatBackend(server["base_url"], "m", max_retries=0).generate(MSGS, GenerationParams())
    assert done.texts == ["hi"] and done.prompt_tokens == 0


def test_retry_after_is_honoured():
    answers = [httpx.Response(429, headers={"Retry-After": "1"}, text="slow down"),
               httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})]
    backend = OpenAICompatBackend("http://x/v1", "m", max_retries=1, backoff_s=0.0,
                                  transport=httpx.MockTransport(lambda r: answers.pop(0)))
    started = time.monotonic()
    assert backend.generate(MSGS, GenerationParams()).texts == ["ok"]
    assert time.monotonic() - started >= 1.0  # told 1 s; the backoff alone would retry at once


def _passages(prefix: str, n: int) -> list[Passage]:
    return [Passage(id=f"{prefix}{i}", text=f"{prefix} passage {i} " * 20) for i in range(n)]


def test_a_full_disk_during_index_add_and_contexts_add_is_reported_and_loses_nothing(small_disk):
    store_passages(small_disk / "idx", _passages("a", 5), HashEmbedder(), IndexConfig())
    store = UserContextStore(small_disk / "users", HashEmbedder())
    store.add("ana", ["first fact"])
    fill(small_disk)
    with pytest.raises(DiskFullError, match=f"no space left on {small_disk}"):
        store_passages(small_disk / "idx", _passages("b", 400), HashEmbedder(), IndexConfig())
    with pytest.raises(DiskFullError, match="no space left on"):
        store.add("ana", ["second fact " * 2000])
    assert [p.id for p in PassageIndex.load(small_disk / "idx", HashEmbedder()).passages] == [f"a{i}" for i in range(5)]
    assert [c.text for c in store.list("ana")] == ["first fact"]
    assert not [p for p in (small_disk / "idx").iterdir() if p.name.startswith("data-")][1:]  # no half version


def test_a_full_disk_during_eval_out_is_one_clear_line(small_disk, tmp_path):
    fill(small_disk)
    with fake_openai_server(lambda body: "unknown") as server:
        result = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "concat", "--limit", "1",
                                     "--out", str(small_disk / "run"), "--set", "llm.backend=openai", "--set",
                                     f"llm.base_url={server['base_url']}", "--set", f"cache_dir={tmp_path / 'c'}"])
        asked = server["requests"]
    _one_clear_line(result, "no space left on")
    assert asked == 0  # the checkpoint's run.json could not be written: found before any model call
    run = small_disk / "run"
    # no partial results file: at most the empty lock file, whose name fit in the full folder
    assert not run.exists() or [p.name for p in run.iterdir()] in ([], [".eval.lock"])
