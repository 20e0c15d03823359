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
    from tanglerag.config import Settings
    from tanglerag.llm.factory import build_llm
    from tanglerag.testing import CannedBackend
    from tanglerag.trace import Message

    llm = build_llm(Settings.load(None, [f"cache_dir={tmp_path}", "llm.cache=false"]), CannedBackend(default="x"))
    llm.complete([Message(role="user", content="q")])
    assert not (tmp_path / "llm_cache.sqlite3").exists()


def test_persistent_5xx_says_what_the_server_answered():
    with pytest.raises(LLMError, match="kept failing after 2 attempts; it last answered HTTP 500: model crashed"):
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
