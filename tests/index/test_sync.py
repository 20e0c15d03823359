"""``index FOLDER --sync`` in process: only new and changed files are read and embedded, deleted files' documents go,
records that came from no file stay, and a sync killed half-way leaves the stored index as it was."""

import hashlib

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IngestError
from tanglerag.index.extend import add_streaming
from tanglerag.index.sync import plan_sync, sync_folder
from tanglerag.types import Passage
from tests.index.stored import stored_passages
from tests.index.test_extend import CountingEmbedder

CONFIG = IndexConfig(chunk_words=20, chunk_overlap=5, min_chunk_words=0)  # a chunk a section, as sync is tested


def _folder(tmp_path, count: int = 6):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    for i in range(count):
        where = docs / "sub" if i % 2 else docs
        (where / f"note{i}.md").write_text(f"# Note {i}\nThe harbour {i} opens at {i} o'clock.\n## Later\nMore {i}.\n")
    return docs


def _by_doc(folder) -> dict[str, list[Passage]]:
    found: dict[str, list[Passage]] = {}
    for p in stored_passages(folder):
        found.setdefault(p.metadata.get("path", p.id), []).append(p)
    return found


def test_sync_reads_only_what_changed_and_removes_what_was_deleted(tmp_path):
    docs, out, embedder = _folder(tmp_path), tmp_path / "idx", CountingEmbedder()
    index, plan, _ = sync_folder(out, docs, embedder, CONFIG)  # no index yet: built from every file
    assert index is not None and len(plan.changed) == 6 and embedder.texts == 12
    add_streaming(out, lambda: iter([Passage(id="record", text="A record from JSONL, no file.")]), embedder, CONFIG)

    (docs / "note0.md").write_text("# Note 0\nThe harbour 0 now opens at noon.\n")
    (docs / "sub" / "note3.md").unlink()
    (docs / "new.txt").write_text("A new file about the lighthouse.")
    embedder.texts = 0
    index, plan, changes = sync_folder(out, docs, embedder, CONFIG)
    assert (sorted(plan.changed), plan.deleted, plan.unchanged) == (["new.txt", "note0.md"], ["sub/note3.md"], 4)
    assert embedder.texts == 2  # note0.md's one section and new.txt: nothing else embedded
    assert changes.replaced == ["note0.md"] and changes.removed_documents == ["sub/note3.md"]
    stored = _by_doc(out)
    assert sorted(stored) == ["new.txt", "note0.md", "note2.md", "note4.md", "record", "sub/note1.md", "sub/note5.md"]
    assert [p.text for p in stored["note0.md"]] == ["# Note 0\nThe harbour 0 now opens at noon."]
    assert stored["note0.md"][0].metadata["sha256"] == hashlib.sha256((docs / "note0.md").read_bytes()).hexdigest()
    assert index is not None and len(index.passages) == sum(map(len, stored.values()))
    assert {hit.passage.id for hit in index.search("harbour 3 opens", 20)}.isdisjoint({"sub/note3.md#0"})

    version = (out / "manifest.json").read_text()
    embedder.texts = 0
    index, plan, changes = sync_folder(out, docs, embedder, CONFIG)  # nothing changed: nothing read or written
    assert index is None and plan.unchanged == 6 and embedder.texts == 0
    assert (out / "manifest.json").read_text() == version


def test_a_sync_killed_half_way_leaves_the_index_as_it_was(tmp_path):
    docs, out = _folder(tmp_path, 4), tmp_path / "idx"
    sync_folder(out, docs, CountingEmbedder(), CONFIG)
    before = _by_doc(out)
    for i in range(4):
        (docs / ("sub" if i % 2 else "") / f"note{i}.md").write_text(f"Rewritten {i}.\n")
    (docs / "note0.md").unlink()
    with pytest.raises(KeyboardInterrupt):
        sync_folder(out, docs, CountingEmbedder(fail_after=0), IndexConfig(chunk_words=20, chunk_overlap=5))
    assert _by_doc(out) == before
    _, plan, _ = sync_folder(out, docs, CountingEmbedder(), CONFIG)  # the next sync does the whole job
    assert (len(plan.changed), plan.deleted) == (3, ["note0.md"])
    assert sorted(_by_doc(out)) == ["note2.md", "sub/note1.md", "sub/note3.md"]


def test_a_sync_of_a_missing_folder_or_of_a_file_says_which(tmp_path):
    with pytest.raises(IngestError, match="does not exist"):
        plan_sync(tmp_path / "gone", {})
    (tmp_path / "notes.md").write_text("# A note\n")
    with pytest.raises(IngestError, match="is a file"):
        plan_sync(tmp_path / "notes.md", {})
