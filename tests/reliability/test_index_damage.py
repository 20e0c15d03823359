"""Issue 49, case 7: one corrupt page in the middle of ``passages.sqlite3`` is reported in one line naming the file
and how to rebuild the index (SQLite's quick_check when the index is opened, and any read that meets the damage
later), by ``ask`` and ``index --add`` in real processes; the real service says not ready instead of answering 500."""

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm, fake_openai_server
from tanglerag.types import Passage
from tests.hashing_cli import HASHING_CLI
from tests.reliability.serving import served

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
TARGET = b"Amundsen"  # only in the passage the question retrieves: its page is the one damaged
QUESTION = "Who kept the lighthouse on the northern cape?"


def _damaged_index(tmp_path: Path) -> tuple[Path, Path]:
    """An index of 40 passages of about 1 kB (a few to a page) whose store has the page of passage 20 overwritten,
    as a bad sector would leave it; returns the index folder and the store's path."""
    filler = " ".join(f"word{i}" for i in range(150))
    passages = [Passage(id=f"p{i}", title=f"Note {i}", text=f"Note {i} on the harbour. {filler}") for i in range(40)]
    passages[20] = Passage(id="p20", title="Cape", text=f"Amundsen kept the lighthouse on the northern cape. {filler}")
    folder = tmp_path / "idx"
    store_passages(folder, passages, HashEmbedder(), IndexConfig(bm25=True))
    store = folder / json.loads((folder / "manifest.json").read_text())["data"] / "passages.sqlite3"
    data = store.read_bytes()
    page = int.from_bytes(data[16:18], "big")  # the page size, from SQLite's file header
    start = data.index(TARGET) // page * page
    assert 0 < start < len(data) - page  # in the middle: neither the header page nor the last
    with store.open("r+b") as fh:
        fh.seek(start)
        fh.write(bytes(range(256)) * (page // 256))
    return folder, store


def _cli(*args: str) -> str:
    """Run the CLI; its exit code must be 2 (a user error) with no traceback; returns what it said on one line."""
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 2 and "Traceback" not in said, said
    return said


def test_ask_and_index_add_name_the_damaged_store_and_the_rebuild(tmp_path):
    folder, store = _damaged_index(tmp_path)
    # the hashing embedder (tests/hashing_cli.py), which built the index: nothing here embeds (BM25 retrieval, and
    # an add refused before embedding)
    common = ["--set", f"cache_dir={tmp_path / 'cache'}"]
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "new", "text": "A new note about the harbour."}) + "\n")
    with fake_openai_server(lambda body: "Amundsen [1]") as server:
        asked = _cli("ask", QUESTION, "--index", str(folder), "--set", "retrieval.mode=bm25", "--set",
                     "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}", *common)
        assert server["requests"] == 0
    added = _cli("index", str(more), "--out", str(folder), "--add", *common)
    for said in (asked, added):
        assert f"{store} is missing or damaged" in said and f"tanglerag index CORPUS --out {folder}" in said


def test_a_read_that_meets_the_damage_after_opening_is_the_same_one_line_error(tmp_path):
    folder, _ = _damaged_index(tmp_path)
    index = PassageIndex.load(folder, HashEmbedder(), mmap=True)  # index.mmap opens without the page-by-page check
    assert index.search("harbour note", 1, "bm25")  # pages that are whole still read
    with pytest.raises(IndexStoreError, match=r"passages\.sqlite3 is missing or damaged .*rebuild the index"):
        index.search(QUESTION, 3, "bm25")
    assert index.damage is not None and "is missing or damaged" in index.damage


@pytest.mark.parametrize("warm_up", [False, True])
def test_the_service_says_not_ready_and_questions_get_no_500(tmp_path, warm_up):
    folder, _ = _damaged_index(tmp_path)
    runtime = Runtime(Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}"]), index_dir=folder,
                      llm=canned_llm(default="Amundsen [1]"), embedder=HashEmbedder())
    with served(runtime, warm_up=warm_up) as url, httpx.Client(base_url=url, timeout=60) as http:
        ready = http.get("/readyz")
        asked = http.post("/v1/ask", json={"question": QUESTION})
        healthy = http.get("/healthz")
    assert ready.status_code == 503 and "passages.sqlite3 is missing or damaged" in ready.json()["error"]
    assert "rebuild the index" in ready.json()["error"]
    assert asked.status_code == 409 and "is missing or damaged" in asked.json()["error"] and healthy.status_code == 200
