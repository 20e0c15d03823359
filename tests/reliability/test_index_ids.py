"""Issue 49, case 3: a chunk id never stands for another document. ``x#1`` may be chunk 1 of a long ``x`` or a
document of its own; which one is stored with the passage, and a write that would give one id to two documents is
refused in one line, replacing or not (HTTP, a real CLI process, and an index written by the previous release)."""

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.extend import add_streaming
from tanglerag.index.passage_index import PassageIndex, remove_documents, store_passages
from tanglerag.ingest import chunk_passages
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm
from tanglerag.types import Passage
from tests.hashing_cli import HASHING_CLI
from tests.index.legacy import as_previous_release
from tests.index.stored import stored_passages
from tests.reliability.serving import served

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
LONG = " ".join(f"harbour{i} lighthouse keeper" for i in range(120))  # 360 words: chunked at 200 words


def _stored(folder: Path) -> dict[str, str]:
    """Passage id -> text, as stored."""
    return {p.id: p.text for p in stored_passages(folder)}


def test_over_http_a_long_document_never_replaces_one_whose_id_looks_like_its_chunk(tmp_path):
    runtime = Runtime(Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}"]),
                      index_dir=tmp_path / "index", llm=canned_llm(), embedder=HashEmbedder())
    note = {"title": "Note", "text": "An unrelated note about the harbour office."}
    with served(runtime) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert http.put("/v1/index/documents/x%231", json=note).status_code == 200  # accepted as a document
        clash = http.put("/v1/index/documents/x", json={"text": LONG})
        assert http.put("/v1/index/documents/y", json={"text": LONG}).status_code == 200
        taken = http.put("/v1/index/documents/y%231", json=note)  # y's chunk 1 is not a free id either
        own = http.put("/v1/index/documents/y%239", json=note)  # y has two chunks: y#9 is anybody's
        removed = http.delete("/v1/index/documents/y")
    assert clash.status_code == 409 and "'x#1'" in clash.json()["error"] and "\n" not in clash.json()["error"]
    assert taken.status_code == 409 and "'y#1'" in taken.json()["error"]
    assert own.status_code == 200 and removed.json()["removed"] == 2
    assert _stored(tmp_path / "index") == {"x#1": note["text"], "y#9": note["text"]}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)


def test_index_add_replace_of_a_long_document_leaves_a_document_named_like_its_chunk(tmp_path):
    corpus, edited = tmp_path / "corpus.jsonl", tmp_path / "edited.jsonl"
    corpus.write_text(json.dumps({"id": "doc#1", "text": "An unrelated note about the harbour office."}) + "\n"
                      + json.dumps({"id": "other", "text": "Zurich lies on a lake."}) + "\n")
    edited.write_text(json.dumps({"id": "doc", "title": "Doc", "text": LONG}) + "\n")
    folder, cache = tmp_path / "idx", ["--set", f"cache_dir={tmp_path / 'cache'}"]
    assert _cli("index", str(corpus), "--out", str(folder), *cache).returncode == 0
    before = _stored(folder)
    run = _cli("index", str(edited), "--out", str(folder), "--add", "--replace", *cache)
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 2 and "Traceback" not in said, said
    assert "'doc#1'" in said and "nothing was written" in said
    assert _stored(folder) == before


def _previous_release_index(folder: Path) -> None:
    """A chunked ``y``, a plain ``x#1`` and ``z``, stored as the release before ``doc_id`` stored them."""
    docs = [Passage(id="x#1", title="X", text="A plain document whose id looks like a chunk id."),
            Passage(id="y", title="Y", text=LONG), Passage(id="z", text="A short note about Zurich.")]
    store_passages(folder, chunk_passages(docs, "test"), HashEmbedder(), IndexConfig(bm25=True))
    as_previous_release(folder)


def test_an_index_of_the_previous_release_opens_refuses_the_clash_and_gains_doc_ids_when_saved(tmp_path):
    folder, embedder = tmp_path / "idx", HashEmbedder()
    _previous_release_index(folder)
    assert [h.passage.id for h in PassageIndex.load(folder, embedder).search("Zurich note", 1, "bm25")] == ["z"]
    long_x = chunk_passages([Passage(id="x", text=LONG)], "test")
    with pytest.raises(IndexStoreError, match="'x#1'.*nothing was written"):
        store_passages(folder, long_x, embedder, IndexConfig(), replace=True)
    with pytest.raises(IndexStoreError, match="'x#1'.*nothing was written"):
        add_streaming(folder, lambda: iter(long_x), embedder, IndexConfig(), replace=True)
    _, changes = remove_documents(folder, ["y"], embedder)  # its chunks, found by the rule that release wrote them
    assert changes.removed == 2 and sorted(_stored(folder)) == ["x#1", "z"]
    data = json.loads((folder / "manifest.json").read_text())["data"]
    with sqlite3.connect(folder / data / "passages.sqlite3") as db:  # the save wrote the new format
        assert db.execute("SELECT id, doc_id FROM passages ORDER BY pos").fetchall() == [("x#1", "x#1"), ("z", "z")]


def test_a_record_bringing_its_own_chunk_marks_is_still_its_own_document(tmp_path):
    # an export of chunks re-indexed: its metadata says source_id / chunk, which only chunking may set
    folder, embedder = tmp_path / "idx", HashEmbedder()
    exported = Passage(id="x#1", text="A short note about the harbour.", metadata={"source_id": "x", "chunk": 1})
    store_passages(folder, chunk_passages([exported], "test"), embedder, IndexConfig())
    long_x = chunk_passages([Passage(id="x", text=LONG)], "test")
    for replace in (False, True):
        with pytest.raises(IndexStoreError, match="'x#1'.*nothing was written"):
            store_passages(folder, long_x, embedder, IndexConfig(), replace=replace)
    assert _stored(folder) == {"x#1": "A short note about the harbour."}
