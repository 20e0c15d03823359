"""Issue 59 (reliability round 4) for ``index --sync`` and the Ray build, in real ``tanglerag`` processes: a sync that
only removes still removes, a JSONL document is never replaced by a file of its id, an unreadable file is one warning
that keeps its indexed version, the summary counts new, changed, deleted and unchanged files, two syncs at once both
finish, a sync never ignores --index-type; a shard of another dimension is refused before anything is written, and a
Ray build killed with ``kill -9`` leaves no Ray process running."""

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import embed_text, index_lock
from tanglerag.index.shards import open_shards, plan_shards, shard_passages, write_shard
from tanglerag.testing import HashEmbedder
from tests import hashing_cli
from tests.hashing_cli import HASHING_CLI
from tests.index.stored import stored_passages

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}


def _cli(*args: str, code: int = 0, preexec_fn=None) -> str:
    """Run the CLI, expect ``code`` (2: a user error, no traceback); what it said, on one line."""
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300,
                         preexec_fn=preexec_fn)
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == code and "Traceback" not in said, said
    return said


def _docs(tmp_path: Path, **files: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in files.items():
        (docs / name.replace("__", "/")).write_text(text)
    return docs


def _by_path(out: Path) -> dict[str, str]:
    """Each stored document (a file's path, else its id) -> its text, chunks joined."""
    found: dict[str, str] = {}
    for p in stored_passages(out):
        doc = p.metadata.get("path", p.id)
        found[doc] = found.get(doc, "") + p.text
    return found


def _sync(docs: Path, out: Path, *more: str, code: int = 0, preexec_fn=None) -> str:
    return _cli("index", str(docs), "--sync", "--out", str(out), "--set", f"cache_dir={out.parent / 'cache'}", *more,
                code=code, preexec_fn=preexec_fn)


def _add_jsonl(out: Path, *records: dict) -> None:
    corpus = out.parent / "records.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    _cli("index", str(corpus), "--add", "--out", str(out), "--set", f"cache_dir={out.parent / 'cache'}")


def test_a_sync_with_nothing_to_embed_still_removes_deleted_files_and_an_emptied_folder_keeps_records(tmp_path):
    docs, out = _docs(tmp_path, **{"a.md": "# A\nThe ferry leaves at six.\n", "b.md": "# B\nThe museum shuts.\n"}), \
        tmp_path / "idx"
    _sync(docs, out)
    _add_jsonl(out, {"id": "record", "text": "A record from JSONL, from no file."})
    (docs / "b.md").unlink()
    said = _sync(docs, out)
    assert "1 files: 0 new, 0 changed, 1 deleted, 1 unchanged" in said and "1 removed" in said, said
    assert sorted(_by_path(out)) == ["a.md", "record"]
    (docs / "a.md").unlink()
    said = _sync(docs, out)
    assert "0 files: 0 new, 0 changed, 1 deleted, 0 unchanged" in said, said
    assert "documents that came from no file (JSONL records, uploads) stay" in said, said
    assert sorted(_by_path(out)) == ["record"]


def test_emptying_a_folder_that_is_the_whole_index_is_refused_in_one_line(tmp_path):
    docs, out = _docs(tmp_path, **{"a.md": "# A\nThe ferry leaves at six.\n"}), tmp_path / "idx"
    _sync(docs, out)
    version = (out / "manifest.json").read_text()
    (docs / "a.md").unlink()
    (docs / "b.md").write_bytes(b"\x00\x01\xff" * 50)  # a new file no loader reads: nothing would be left either
    said = _sync(docs, out, code=2)
    assert said.count("b.md") == 1 and "looks binary" in said, said
    assert f"would remove every document of {out} and leave an empty index" in said, said
    (docs / "b.md").unlink()
    said = _sync(docs, out, code=2)
    assert f"{docs} holds no file that can be read now" in said, said
    assert (out / "manifest.json").read_text() == version


def test_a_sync_refuses_to_replace_a_jsonl_document_whose_id_is_a_files_path(tmp_path):
    docs, out = _docs(tmp_path, **{"a.md": "# A\nThe ferry leaves at six.\n"}), tmp_path / "idx"
    _sync(docs, out)
    _add_jsonl(out, {"id": "notes/plan.md", "text": "The plan as a JSONL record."})
    version = (out / "manifest.json").read_text()
    (docs / "notes").mkdir()
    (docs / "notes" / "plan.md").write_text("# Plan\nThe plan as a file.\n")
    said = _sync(docs, out, code=2)
    assert f"document 'notes/plan.md' did not come from a file, and the file {docs / 'notes' / 'plan.md'} has its id" \
        in said, said
    assert (out / "manifest.json").read_text() == version
    assert _by_path(out)["notes/plan.md"] == "The plan as a JSONL record."


def _without_root_reads() -> None:
    """In the child, before exec: drop root's right to read any file, so a mode-000 file is unreadable even to root
    (PR_CAPBSET_DROP of CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: exec leaves root without them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        libc.prctl(24, capability, 0, 0, 0)


def test_an_unreadable_file_or_folder_under_sync_is_one_warning_and_keeps_its_indexed_version(tmp_path):
    """A file that could not be read was a traceback, and the files of a folder that could not be listed were taken
    for deleted and removed."""
    docs = _docs(tmp_path, **{"a.md": "# A\nThe ferry leaves at six.\n", "b.md": "# B\nThe museum shuts.\n",
                              "c.md": "# C\nThe bridge opens.\n"})
    (docs / "sub").mkdir()
    (docs / "sub" / "d.md").write_text("# D\nThe pier closes.\n")
    out = tmp_path / "idx"
    _sync(docs, out)
    (docs / "a.md").write_text("# A\nThe ferry now leaves at seven.\n")
    (docs / "b.md").chmod(0)
    (docs / "sub").chmod(0)
    try:
        said = _sync(docs, out, preexec_fn=_without_root_reads)
    finally:
        (docs / "b.md").chmod(0o644)
        (docs / "sub").chmod(0o755)
    for file in (docs / "b.md", docs / "sub" / "d.md"):
        assert said.count(file.name) == 1 and f"skipping {file}: Permission denied; its indexed version stays" in said
    assert "3 files: 0 new, 1 changed, 0 deleted, 1 unchanged, 2 unreadable" in said, said
    assert _by_path(out) == {"a.md": "# A\nThe ferry now leaves at seven.", "b.md": "# B\nThe museum shuts.",
                             "c.md": "# C\nThe bridge opens.", "sub/d.md": "# D\nThe pier closes."}

    (docs / "c.md").write_bytes(b"\x00\x01\xff" * 50)  # changed into something no loader reads, and nothing to embed
    (docs / "a.md").unlink()
    said = _sync(docs, out)
    assert said.count("c.md") == 1 and "looks binary" in said, said
    assert _by_path(out) == {"b.md": "# B\nThe museum shuts.", "c.md": "# C\nThe bridge opens.",
                             "sub/d.md": "# D\nThe pier closes."}


def test_the_sync_summary_counts_new_changed_deleted_and_unchanged_files(tmp_path):
    docs = _docs(tmp_path, **{"a.md": "# A\nOne.\n", "b.md": "# B\nTwo.\n", "c.md": "# C\nThree.\n",
                              "d.md": "# D\nFour.\n"})
    out = tmp_path / "idx"
    assert "4 files: 4 new, 0 changed, 0 deleted, 0 unchanged" in _sync(docs, out)
    (docs / "a.md").write_text("# A\nOne, edited.\n")
    (docs / "b.md").unlink()
    (docs / "e.md").write_text("# E\nFive.\n")
    said = _sync(docs, out)
    assert "4 files: 1 new, 1 changed, 1 deleted, 2 unchanged" in said, said
    assert "(1 new, 1 changed and 1 deleted files)" in said, said


def test_a_sync_keeps_the_index_type_or_says_so_even_when_nothing_changed(tmp_path):
    docs, out = _docs(tmp_path, **{"a.md": "# A\nOne.\n"}), tmp_path / "idx"
    _sync(docs, out)
    said = _sync(docs, out, "--index-type", "hnsw", code=2)
    assert f"{out} is a flat index; --sync keeps its settings" in said, said


WAITS_FOR_THE_LOCK = f"""
import os, runpy, sys
from pathlib import Path

hashing = runpy.run_path({hashing_cli.__file__!r})
hashing["use_hashing"]()
import tanglerag.index.extend as extend

held = extend.index_lock

def announced(folder):  # the sync has looked at the folder and now waits for the writer holding the index
    Path(os.environ["WAITING"]).touch()
    return held(folder)

extend.index_lock = announced
hashing["main"]()
"""


def test_two_syncs_at_once_both_finish_one_writing_and_one_finding_it_done(tmp_path):
    docs, out = _docs(tmp_path, **{"a.md": "# A\nOne.\n", "b.md": "# B\nTwo.\n"}), tmp_path / "idx"
    _sync(docs, out)
    (docs / "a.md").write_text("# A\nOne, edited.\n")
    (docs / "b.md").unlink()
    args = ["index", str(docs), "--sync", "--out", str(out), "--set", f"cache_dir={tmp_path / 'cache'}"]
    runs = []
    with index_lock(out):  # another writer holds the index while both syncs start
        for n in range(2):
            marker = tmp_path / f"waiting{n}"
            runs.append(subprocess.Popen([sys.executable, "-c", WAITS_FOR_THE_LOCK, *args],
                                         env={**ENV, "WAITING": str(marker)}, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True))
            deadline = time.monotonic() + 120
            while not marker.exists():
                assert time.monotonic() < deadline and runs[-1].poll() is None, runs[-1].communicate()
                time.sleep(0.05)
    said = [" ".join(run.communicate(timeout=300)[0].split()) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], said
    assert sorted(("nothing written" in s, "1 passages embedded, 2 removed" in s) for s in said) == [
        (False, True), (True, False)], said  # one wrote the sync, the other found it done
    assert _by_path(out) == {"a.md": "# A\nOne, edited."}


def test_a_ray_shard_of_another_dimension_is_refused_naming_it_before_anything_is_written(tmp_path):
    """Shard 1 embedded by a 32-dimension model beside shard 0's 64: the build said nothing and every ``ask`` failed
    on a faiss assertion. The shards are a Parquet file's row groups, embedded here as the actors write them, so the
    real command finds them all done and only builds (no Ray is started)."""
    corpus, shards, out = tmp_path / "corpus.parquet", tmp_path / "shards", tmp_path / "idx"
    records = [{"id": f"d{i}", "title": f"Doc {i}", "text": f"the harbour opens at {i} o'clock"} for i in range(6)]
    pq.write_table(pa.Table.from_pylist(records), corpus, row_group_size=3)
    plan = plan_shards(corpus, IndexConfig(), "hash-64")
    for number, embedder in zip(open_shards(shards, plan), (HashEmbedder(), HashEmbedder(dim=32)), strict=True):
        passages = shard_passages(plan, number)
        write_shard(shards, number, passages, embedder.embed([embed_text(p) for p in passages]))
    said = _cli("index", str(corpus), "--engine", "ray", "--shards", str(shards), "--out", str(out),
                "--set", "embedding.model=hash-64", "--set", f"cache_dir={tmp_path / 'cache'}", code=2)
    assert "6 documents in 2 shard(s), 0 to embed" in said, said
    assert f"{shards / 'shard-000001.npy'} holds vectors of 32 dimensions, shard-000000.npy of 64" in said, said
    assert "remove the shard's files (shard-000001.*)" in said and not out.exists(), said
    assert np.load(shards / "shard-000000.npy").shape == (3, 64)  # the shards are left as they were


EMBEDS_FOREVER = f"""
import os, runpy, time
from pathlib import Path

hashing = runpy.run_path({hashing_cli.__file__!r})
hashing["use_hashing"]()
import tanglerag.cli.index

def embedder():  # in each Ray actor: the cluster is up and the actors started; the command is killed meanwhile
    Path(os.environ["EMBEDDING"]).touch()
    time.sleep(600)

tanglerag.cli.index.embedder_factory = lambda settings: embedder
hashing["main"]()
"""


def _ray_processes(ray_dir: Path) -> dict[int, str]:
    """The live processes of the Ray sessions under ``ray_dir`` (those holding a file open there: their logs), each
    with its command line."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and any(os.readlink(fd).startswith(str(ray_dir)) for fd in (proc / "fd").iterdir()):
                found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or a zombie
            continue
    return found


def test_a_ray_build_killed_with_kill_9_leaves_no_ray_process_running(tmp_path):
    """Ray's GCS and raylet died with the killed command, but its dashboard and runtime-env agents (~170 MB) stayed
    for a minute, trying to tell the dead GCS; now every process the command started goes with it."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": f"note {i} on the harbour"}) + "\n" for i in range(4)))
    ray_dir = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths must stay under 108 bytes
    embedding = tmp_path / "embedding"
    command = subprocess.Popen(
        [sys.executable, "-c", EMBEDS_FOREVER, "index", str(corpus), "--engine", "ray", "--ray-actors", "1",
         "--out", str(tmp_path / "idx"), "--set", "embedding.model=hash-64", "--set", f"cache_dir={tmp_path / 'c'}"],
        env={**ENV, "EMBEDDING": str(embedding), "RAY_TMPDIR": str(ray_dir)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while not embedding.exists():
            assert time.monotonic() < deadline and command.poll() is None, command.communicate()[0]
            time.sleep(0.2)
        assert any("Agent" in p for p in _ray_processes(ray_dir).values()), _ray_processes(ray_dir)
        command.send_signal(signal.SIGKILL)
        command.wait()
        deadline = time.monotonic() + 20  # the agents stayed 60 s
        while _ray_processes(ray_dir) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _ray_processes(ray_dir) == {}
    finally:
        command.kill()
        for pid in _ray_processes(ray_dir):  # what a failure leaves, found by this test's own Ray folder
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(ray_dir, ignore_errors=True)
