"""A store's collection kept in step with its documents, on every backend (issue 68): a document written again
replaces all of its chunks, documents are removed by id, and a folder is synced (changed files written, deleted ones
removed, unchanged ones not read), all read back from the collection itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tanglerag.errors import InputError
from tanglerag.ingest import read_folder_files, stream_chunks
from tanglerag.stores.documents import held_documents, remove_documents, sync_store, write_documents
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage
from tests.stores.backends import DIMENSION

EMBEDDER = HashEmbedder(dim=DIMENSION)


def chunks(doc: str, n: int, words: str = "old allowance") -> list[Passage]:
    return [Passage(id=f"{doc}#{i}", text=f"{words} {i} of {doc}", metadata={"source_id": doc, "chunk": i})
            for i in range(n)]


def ids(store) -> set[str]:
    return {pid for pid, _ in store.scan()}


def test_a_document_written_again_replaces_all_of_its_chunks(open_store):
    store = open_store()
    first = write_documents(store, chunks("policy.md", 15) + chunks("other.md", 2), EMBEDDER, "passages")
    assert (first.written, first.stale) == (17, 0)
    again = write_documents(store, chunks("policy.md", 1, "new allowance"), EMBEDDER, "passages")
    assert (again.written, again.stale) == (1, 14)
    assert ids(store) == {"policy.md#0", "other.md#0", "other.md#1"}
    assert store.search(EMBEDDER.embed(["new allowance 0 of policy.md"])[0], 1)[0].passage.text.startswith("new")


ATOMIC = {"pgvector", "qdrant", "lancedb"}
"""The stores whose ``replace`` writes a document's new chunks and deletes its old ones as one change."""


def test_a_document_written_again_is_one_change_where_the_store_has_one(open_store, backend, monkeypatch):
    """The new chunks and the deletion of the old go to the store together (a transaction, one request, one commit),
    so a writer killed midway leaves the document as it was or as it is; never the two-step write and delete."""
    store = open_store()
    write_documents(store, chunks("policy.md", 3), EMBEDDER, "passages")
    if not hasattr(store, "replace"):
        pytest.skip("this store writes, then deletes (docs/stores.md)")
    assert type(store).name in ATOMIC
    monkeypatch.setattr(store, "delete", lambda ids: pytest.fail(f"deleted {ids} apart from the write"))
    again = write_documents(store, chunks("policy.md", 1, "new allowance"), EMBEDDER, "passages")
    assert (again.written, again.stale) == (1, 2) and ids(store) == {"policy.md#0"}


def test_documents_are_removed_by_id_and_an_unknown_one_removes_nothing(open_store):
    store = open_store()
    write_documents(store, chunks("a.md", 3) + chunks("b.md", 2) + [Passage(id="rec1", text="a record")],
                    EMBEDDER, "passages")
    with pytest.raises(InputError, match="holds no document 'zzz'"):
        remove_documents(store, ["a.md", "zzz"])
    assert store.count() == 6
    assert remove_documents(store, ["a.md", "rec1"]) == 4
    assert ids(store) == {"b.md#0", "b.md#1"} and set(held_documents(store)) == {"b.md"}


def test_a_folder_is_synced_from_what_the_collection_holds(open_store, tmp_path):
    folder = tmp_path / "fold"
    folder.mkdir()
    (folder / "policy.md").write_text("# Policy\n\n" + "The old allowance was 100 euros. " * 120)
    (folder / "gone.md").write_text("# Gone\n\nThe secret code is ZEBRA.")
    (folder / "same.md").write_text("# Same\n\nThis file does not change.")
    read_files: list[list[str]] = []

    def read(files: list[Path]):
        read_files.append(sorted(f.name for f in files))
        return stream_chunks(read_folder_files(folder, files), str(folder), chunk_size=60, chunk_overlap=0,
                             min_chunk_words=1)

    store = open_store()
    plan, done, gone = sync_store(store, folder, read, EMBEDDER, "passages")
    assert len(plan.new) == 3 and done.written > 3 and gone == 0
    (folder / "policy.md").write_text("# Policy\n\nThe allowance is now 999 euros.\n")
    (folder / "gone.md").unlink()
    store.close()  # and opened again, as another machine would (Qdrant's local mode: one client a folder)
    store = open_store()
    plan, done, gone = sync_store(store, folder, read, EMBEDDER, "passages")
    assert (plan.changed, plan.deleted, plan.unchanged) == (["policy.md"], ["gone.md"], 1)
    assert read_files[-1] == ["policy.md"] and gone == 1 and done.stale > 0
    texts = {hit.passage.text for hit in store.search(EMBEDDER.embed(["allowance euros"])[0], 10)}
    assert any("999" in t for t in texts) and not any("100 euros" in t or "ZEBRA" in t for t in texts)


@pytest.mark.parametrize("backend_name", ["qdrant", "lancedb", "chroma"])
def test_a_collection_embedded_with_another_model_is_refused_in_one_line(tmp_path, backend_name):
    import importlib.util

    from tanglerag.settings import Settings
    from tanglerag.stores.base import StoreError
    from tanglerag.stores.factory import build_store, open_store

    needs = {"qdrant": "qdrant_client", "lancedb": "lancedb", "chroma": "chromadb"}[backend_name]
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed")
    settings = Settings.load(overrides=[f"store.backend={backend_name}", f"store.path={tmp_path / 's'}",
                                        "store.collection=docs"])
    ours = HashEmbedder(model_name="hash-a", dim=DIMENSION)
    writer = build_store(settings, ours)
    write_documents(writer, chunks("a.md", 2), ours, "docs")
    writer.close()
    assert open_store(settings, ours).written_by() == "hash-a"
    with pytest.raises(StoreError, match="collection 'docs' was embedded with 'hash-a', but the configured "
                                         "embedder is 'hash-b'") as raised:
        open_store(settings, HashEmbedder(model_name="hash-b", dim=DIMENSION))
    assert "\n" not in str(raised.value)
