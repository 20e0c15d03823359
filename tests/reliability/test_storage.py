"""No data loss: refusing foreign folders, kill -9 in the middle of a save, concurrent writers (real processes)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage
from tests.index.legacy import as_format_2

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _passages(prefix: str, n: int) -> list[Passage]:
    return [Passage(id=f"{prefix}{i}", text=f"{prefix} passage number {i} about topic {i % 3}") for i in range(n)]


def test_a_folder_that_is_not_an_index_is_never_written_into(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me")
    index = PassageIndex.build(_passages("a", 3), HashEmbedder(), IndexConfig())
    with pytest.raises(IndexStoreError, match="is not a tanglerag index; refusing"):
        index.save(notes)
    assert (notes / "todo.txt").read_text() == "keep me" and sorted(p.name for p in notes.iterdir()) == ["todo.txt"]
    index.save(tmp_path / "fresh")  # a new folder is fine, and so is replacing an index
    index.save(tmp_path / "fresh")
    assert len([p for p in (tmp_path / "fresh").iterdir() if p.name.startswith("data-")]) == 1


KILL_DURING_SAVE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import tanglerag.index.passage_index as module
    from tanglerag.config import IndexConfig
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage

    def die(*args, **kwargs):  # the new version's files are written; the manifest is not yet replaced
        os.kill(os.getpid(), signal.SIGKILL)

    module.atomic_write_text = die
    passages = [Passage(id=f"b{i}", text=f"new passage {i}") for i in range(7)]
    module.PassageIndex.build(passages, HashEmbedder(), IndexConfig()).save(Path(sys.argv[1]))
""")


def test_kill_9_in_the_middle_of_a_save_keeps_the_old_index(tmp_path):
    folder = tmp_path / "idx"
    PassageIndex.build(_passages("a", 3), HashEmbedder(), IndexConfig()).save(folder)
    run = subprocess.run([sys.executable, "-c", KILL_DURING_SAVE, str(folder)], env=ENV)
    assert run.returncode == -signal.SIGKILL
    assert len([p for p in folder.iterdir() if p.name.startswith("data-")]) == 2  # the dead save's leftover
    survivor = PassageIndex.load(folder, HashEmbedder())
    assert [p.id for p in survivor.passages] == ["a0", "a1", "a2"]
    survivor.add(_passages("c", 2))
    survivor.save(folder)  # the next save cleans up what the killed one left
    assert len([p for p in folder.iterdir() if p.name.startswith("data-")]) == 1
    assert len(PassageIndex.load(folder, HashEmbedder()).passages) == 5


def test_a_first_build_killed_mid_save_is_retried_in_the_same_folder(tmp_path):
    folder = tmp_path / "idx"
    run = subprocess.run([sys.executable, "-c", KILL_DURING_SAVE, str(folder)], env=ENV)
    assert run.returncode == -signal.SIGKILL and not (folder / "manifest.json").exists()
    assert [p.name[:5] for p in folder.iterdir()] == ["data-"]  # only the dead build's unfinished version
    store_passages(folder, _passages("a", 3), HashEmbedder(), IndexConfig())
    assert len(PassageIndex.load(folder, HashEmbedder()).passages) == 3
    assert len([p for p in folder.iterdir() if p.name.startswith("data-")]) == 1  # the leftover is swept away


class _CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts, **kwargs):
        self.embedded += len(texts)
        return super().embed(texts, **kwargs)


def test_a_folder_that_is_not_an_index_is_refused_before_any_embedding(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    embedder = _CountingEmbedder()
    with pytest.raises(IndexStoreError, match="is not a tanglerag index"):
        store_passages(tmp_path / "notes", _passages("a", 50), embedder, IndexConfig())
    assert embedder.embedded == 0


def test_indexes_in_the_old_layout_still_load_and_are_upgraded_on_save(tmp_path):
    folder = tmp_path / "old"
    index = PassageIndex.build(_passages("a", 3), HashEmbedder(), IndexConfig())
    index.save(folder)
    data = next(p for p in folder.iterdir() if p.name.startswith("data-"))
    as_format_2(folder)
    for item in data.iterdir():  # rebuild the pre-version layout: files beside the manifest
        item.rename(folder / item.name)
    data.rmdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["data"]
    (folder / "manifest.json").write_text(json.dumps(manifest | {"format_version": 1}))
    loaded = PassageIndex.load(folder, HashEmbedder())
    loaded.save(folder)
    assert {p.name for p in folder.iterdir()} == {"manifest.json", json.loads(
        (folder / "manifest.json").read_text())["data"]}


WRITER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from tanglerag.config import IndexConfig
    from tanglerag.index.passage_index import store_passages
    from tanglerag.index.user_contexts import UserContextStore
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage

    class SlowEmbedder(HashEmbedder):  # the model's seconds, without loading one: a wide window for a lost update
        def embed(self, texts, **kwargs):
            time.sleep(1.5)
            return super().embed(texts, **kwargs)

    kind, folder, payload = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    if kind == "index":
        store_passages(folder, [Passage(**row) for row in payload], SlowEmbedder(), IndexConfig(), add=True)
    else:
        UserContextStore(folder, SlowEmbedder()).add("ana", payload)
""")


def _writer(kind: str, folder: Path, payload: list) -> subprocess.CompletedProcess:
    """A writer in a process of its own, through the library calls that `index --add` and `contexts add` make."""
    return subprocess.run([sys.executable, "-c", WRITER, kind, str(folder), json.dumps(payload)], env=ENV,
                          capture_output=True, text=True)


def test_concurrent_index_adds_and_context_adds_lose_nothing(tmp_path):
    # each writer embeds inside its read-add-save for longer than the processes' start-up skew, so without the
    # lock both would read the seed-only index and the last save would drop the other's passages
    corpora = [[{"id": f"{name}-{i}", "text": f"{name} document {i} on subject {i}"} for i in range(120)]
               for name in ("two", "one")]
    store_passages(tmp_path / "idx", [Passage(id="seed", text="the first document")], HashEmbedder(), IndexConfig())
    with ThreadPoolExecutor(4) as pool:
        writes = [pool.submit(_writer, "index", tmp_path / "idx", rows) for rows in corpora]
        writes += [pool.submit(_writer, "contexts", tmp_path / "users", [f"{who} fact {i}" for i in range(60)])
                   for who in ("first", "second")]
        results = [f.result() for f in writes]
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["count"] == 241  # the seed and both corpora, none lost to the other writer
    assert len(UserContextStore(tmp_path / "users", HashEmbedder()).list("ana")) == 120


def test_add_refuses_settings_it_would_silently_ignore(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps({"id": "x", "text": "some text"}) + "\n")
    common = ["--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path / 'cache'}"]
    assert CliRunner().invoke(app, ["index", str(tmp_path / "c.jsonl"), *common]).exit_code == 0
    refused = CliRunner().invoke(app, ["index", str(tmp_path / "c.jsonl"), "--add", "--index-type", "hnsw", *common])
    assert refused.exit_code == 2 and "--add keeps its settings" in " ".join(refused.output.split())


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "dense.faiss").unlink(), "dense.faiss is missing or damaged"),
    (lambda d: (d / "dense.faiss").write_bytes((d / "dense.faiss").read_bytes()[:40]), "dense.faiss is missing or damaged"),
    (lambda d: (d / "passages.sqlite3").unlink(), "passages.sqlite3 is missing or damaged"),
    (lambda d: (d / "passages.sqlite3").write_text("{not a database\n"), "passages.sqlite3 is missing or damaged"),
    (lambda d: __import__("shutil").rmtree(d / "bm25"), "bm25 is missing or damaged"),
])
def test_a_damaged_index_is_one_clear_error(tmp_path, damage, message):
    folder = tmp_path / "idx"
    PassageIndex.build(_passages("a", 3), HashEmbedder(), IndexConfig(bm25=True)).save(folder)
    damage(next(p for p in folder.iterdir() if p.name.startswith("data-")))
    with pytest.raises(IndexStoreError, match=message):
        PassageIndex.load(folder, HashEmbedder())


def test_manifest_that_disagrees_with_the_files_is_refused(tmp_path):
    folder = tmp_path / "idx"
    PassageIndex.build(_passages("a", 3), HashEmbedder(), IndexConfig()).save(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(manifest | {"index_type": "hnsw"}))
    with pytest.raises(IndexStoreError, match="manifest says hnsw of dimension 64, dense.faiss holds flat"):
        PassageIndex.load(folder, HashEmbedder())


KILL_DURING_TRIM = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import tanglerag.fileio as fileio
    from tanglerag.index.trim import TrimLog

    real_replace = os.replace

    def die_on_the_log(src, dst):  # the new log is written in full beside the old one; the rename never happens
        if Path(dst).name == "trim_log.jsonl":
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)

    fileio.os.replace = die_on_the_log
    TrimLog(Path(sys.argv[1])).add_witnesses("q2", ["a1"], ["a2"], judge="test", k=2)
""")


def test_kill_9_while_the_trim_log_is_written_keeps_the_last_state(tmp_path):
    from tanglerag.index.trim import TrimLog

    folder = tmp_path / "idx"
    PassageIndex.build(_passages("a", 30), HashEmbedder(), IndexConfig(index_type="hnsw")).save(folder)
    TrimLog(folder).add_witnesses("q1", ["a1"], ["a2"], judge="test", k=2)  # one witness: not cut yet
    run = subprocess.run([sys.executable, "-c", KILL_DURING_TRIM, str(folder)], env=ENV)
    assert run.returncode == -signal.SIGKILL
    state = TrimLog(folder).state()  # the leftover temporary file is ignored
    assert state.judged_queries == 1 and state.witnesses == {("a1", "a2"): 1} and not state.is_separated("a1", "a2")
    assert PassageIndex.load(folder, HashEmbedder()).cut_link_count == 0
    TrimLog(folder).add_witnesses("q2", ["a1"], ["a2"], judge="test", k=2)  # the same write, not killed this time
    assert TrimLog(folder).state().is_separated("a1", "a2")
    reloaded = PassageIndex.load(folder, HashEmbedder())
    assert reloaded.trim.is_separated("a1", "a2") and reloaded.cut_link_count > 0


def _open_and_write(path: str, start: float, writable: Any) -> None:
    import time

    from tanglerag.disk_store import SqliteTable

    while time.time() < start:  # every process at once, on a file none has created yet
        pass
    table = SqliteTable(Path(path), "calls", "LLM cache")
    table.put_many([(f"{os.getpid()}", "v")])
    writable.put(table.writable)


def test_processes_opening_one_new_cache_file_at_once_all_keep_writing_it(tmp_path):
    """Replicas or workers starting together on one new LLM cache file raced to switch it to WAL; SQLite answered
    "database is locked" at once, and 9 of 80 such processes ran without their cache (benchmarks/llm_cache_share.py
    found it)."""
    import multiprocessing
    import sqlite3
    import time

    context = multiprocessing.get_context("fork")
    for trial in range(4):
        path, writable = tmp_path / f"cache-{trial}.sqlite", context.Queue()
        start = time.time() + 0.3
        procs = [context.Process(target=_open_and_write, args=(str(path), start, writable)) for _ in range(4)]
        for proc in procs:
            proc.start()
        assert [writable.get(timeout=60) for _ in procs] == [True] * 4
        for proc in procs:
            proc.join()
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM calls").fetchone() == (4,)
