"""Model and server faults: nothing malformed is cached, a damaged cache or model path is a clear message."""

import httpx
import pytest

from tanglerag.errors import LLMError
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.model_files import resolve_gguf
from tests.llm.test_openai_compat import MSGS, _backend


def test_a_damaged_cache_file_is_moved_aside_with_a_warning(tmp_path, caplog):
    from tanglerag.llm.base import RawCompletion
    from tanglerag.llm.cache import CallCache

    path = tmp_path / "llm_cache.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    cache = CallCache(path)
    cache.put("k", RawCompletion(texts=["a"], prompt_tokens=1, completion_tokens=1))
    assert CallCache(path).get("k").texts == ["a"]  # a fresh cache took its place and works
    damaged = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(damaged) == 1 and damaged[0].read_bytes().startswith(b"this is not a database")
    assert "is damaged" in caplog.text


def test_no_cache_setting_never_opens_the_cache_file(tmp_path):
    from tanglerag.llm.factory import build_llm
    from tanglerag.settings import Settings
    from tanglerag.testing import CannedBackend
    from tanglerag.trace import Message

    settings = Settings.load(None, [f"cache_dir={tmp_path}", "llm.cache=false"])
    llm = build_llm(settings.llm, settings.cache_dir, CannedBackend(default="x"))
    llm.complete([Message(role="user", content="q")])
    assert not (tmp_path / "llm_cache.sqlite3").exists()


def test_persistent_5xx_says_what_the_server_answered():
    with pytest.raises(LLMError, match="kept failing after 2 attempts over 0 s; it last answered HTTP 500: model crashed"):
        _backend(lambda r: httpx.Response(500, text="model crashed"), max_retries=1).generate(MSGS, GenerationParams())


def test_a_reply_without_choices_is_an_error_and_never_cached(tmp_path):
    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM

    replies = [{"choices": []}, {"choices": [{"message": {"content": "fixed"}}]}]
    llm = LLM(_backend(lambda r: httpx.Response(200, json=replies.pop(0))), CallCache(tmp_path / "c.sqlite3"))
    with pytest.raises(LLMError, match="unexpected response"):
        llm.complete(MSGS)
    assert llm.complete(MSGS).text == "fixed"  # the failure was not replayed from the cache


def test_a_folder_named_like_a_model_is_a_clear_error(tmp_path):
    folder = tmp_path / "model.gguf"
    folder.mkdir()
    with pytest.raises(LLMError, match="is a folder, not a .gguf file"):
        resolve_gguf(str(folder), tmp_path)


def test_a_server_that_replies_without_choices_then_recovers_over_real_http(tmp_path):
    """The command fails clearly while the server is broken and works once it is fixed (nothing bad was cached)."""
    import json

    from typer.testing import CliRunner

    from tanglerag.cli import app
    from tanglerag.testing import fake_openai_server

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "fr", "text": "Paris is the capital of France."}) + "\n")
    common = ["--set", f"cache_dir={tmp_path / 'cache'}"]
    runner = CliRunner()
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), *common])
    broken = {"on": True}
    with fake_openai_server(lambda body: "Paris [1]",
                            payload=lambda body: {"choices": []} if broken["on"] else None) as server:
        ask = ["ask", "capital of France?", "--index", str(tmp_path / "idx"), "--set", "llm.backend=openai",
               "--set", f"llm.base_url={server['base_url']}", *common]
        failed = runner.invoke(app, ask)
        assert failed.exit_code == 2 and "unexpected response" in failed.output
        broken["on"] = False
        fixed = runner.invoke(app, [*ask, "--json"])
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["answer"] == "Paris [1]"


def test_a_server_that_keeps_failing_is_reported_with_its_answer_over_real_http(tmp_path):
    from tanglerag.llm.openai_compat import OpenAICompatBackend
    from tanglerag.testing import fake_openai_server

    with fake_openai_server(lambda body: "x", fail_first=5, status=500) as server:
        backend = OpenAICompatBackend(server["base_url"], "m", max_retries=2, backoff_s=0.0)
        with pytest.raises(LLMError, match="kept failing after 3 attempts over 0 s; it last answered HTTP 500: busy"):
            backend.generate(MSGS, GenerationParams())
    assert server["requests"] == 3


def test_a_full_disk_keeps_the_cache_file_and_still_reads_it(small_disk, caplog):
    """A write error is not damage: the file stays in place, its calls are still served, and nothing is moved aside."""
    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.testing import CannedBackend
    from tests.reliability.conftest import fill

    path = small_disk / "llm_cache.sqlite3"
    LLM(CannedBackend(default="stored"), CallCache(path)).complete(MSGS)
    fill(small_disk)
    backend = CannedBackend(default="fresh")
    llm = LLM(backend, CallCache(path))
    assert llm.complete(MSGS).text == "stored" and not backend.requests  # the intact copy answers: 0 model calls
    other = [MSGS[0].model_copy(update={"content": "another question"})]
    assert llm.complete(other).text == "fresh" and llm.complete(other).text == "fresh"  # cached in memory
    assert len(backend.requests) == 1
    assert sorted(p.name for p in small_disk.iterdir() if ".damaged" in p.name) == []
    assert caplog.text.count("cannot be written") == 1  # warned once
    assert LLM(CannedBackend(default="x"), CallCache(path)).complete(MSGS).text == "stored"
