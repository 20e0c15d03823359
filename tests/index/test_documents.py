"""Replacing and removing documents (all of a long document's chunks) in every index type, saved and reloaded."""

from __future__ import annotations

import pytest

from tanglerag.config import IndexConfig
from tanglerag.index.documents import DocumentConflict, PassageIdTaken, UnknownDocuments, document_id
from tanglerag.index.extend import add_streaming
from tanglerag.index.passage_index import IndexStoreError, PassageIndex, remove_documents, store_passages
from tanglerag.index.trim import TrimState
from tanglerag.ingest import chunk_passages
from tanglerag.types import Passage

LONG = Passage(id="guide", title="Guide", text=" ".join(f"lighthouse{i} keeper harbour" for i in range(30)))


def _corpus(passages: list[Passage]) -> list[Passage]:
    return chunk_passages([*passages, LONG], "test", chunk_size=40, chunk_overlap=0)


def _ids(index: PassageIndex, query: str, k: int = 10, mode: str = "dense") -> list[str]:
    return [h.passage.id for h in index.search(query, k, mode=mode)]


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_remove_takes_every_chunk_of_a_document_out_for_good(tmp_path, passages, embedder, index_type):
    folder = tmp_path / "idx"
    store_passages(folder, _corpus(passages), embedder, IndexConfig(index_type=index_type, bm25=True), add=False)
    assert {document_id(p) for p in PassageIndex.load(folder, embedder).passages} >= {"guide", "p1"}
    index, changes = remove_documents(folder, ["guide", "p2"], embedder)
    assert changes.removed == 3 + 1 and changes.removed_documents == ["guide", "p2"]
    for loaded in (index, PassageIndex.load(folder, embedder)):
        assert [p.id for p in loaded.passages] == ["p1", "p3", "p4", "p5"] and loaded.dense.ntotal == 4
        assert "p2" not in _ids(loaded, "Berlin capital of Germany") + _ids(loaded, "Berlin Germany", mode="bm25")
        assert _ids(loaded, "Madrid Spain", 1) == ["p3"]


def test_unknown_ids_or_emptying_the_index_change_nothing(tmp_path, passages, embedder):
    folder = tmp_path / "idx"
    store_passages(folder, passages, embedder, IndexConfig())
    with pytest.raises(UnknownDocuments, match="'nope'"):
        remove_documents(folder, ["p1", "nope"], embedder)
    with pytest.raises(IndexStoreError, match="empty index"):
        remove_documents(folder, [p.id for p in passages], embedder)
    assert len(PassageIndex.load(folder, embedder).passages) == 5


def test_a_changed_document_is_a_conflict_unless_replaced(tmp_path, passages, embedder):
    folder = tmp_path / "idx"
    store_passages(folder, _corpus(passages), embedder, IndexConfig(bm25=True))
    changed = Passage(id="p2", title="Berlin", text="Berlin hosts the Brandenburg Gate and many museums.")
    short_guide = Passage(id="guide", title="Guide", text="A short guide to the harbour lighthouse.")
    with pytest.raises(DocumentConflict, match="'guide', 'p2'.*replace") as err:
        store_passages(folder, [passages[0], changed, short_guide], embedder, IndexConfig())
    assert err.value.ids == ["guide", "p2"]
    assert PassageIndex.load(folder, embedder).passages[1].text == passages[1].text  # nothing written
    index, changes = store_passages(folder, [passages[0], changed, short_guide], embedder, IndexConfig(), replace=True)
    assert (changes.added, changes.unchanged, changes.removed, changes.replaced) == (2, 1, 1 + 3, ["guide", "p2"])
    loaded = PassageIndex.load(folder, embedder)
    assert sorted(p.id for p in loaded.passages) == ["guide", "p1", "p2", "p3", "p4", "p5"]
    assert _ids(loaded, "Brandenburg Gate museums", 1, mode="bm25") == ["p2"]
    assert "Germany" not in " ".join(p.text for p in loaded.passages)


def test_an_identical_upload_adds_nothing_and_replacing_everything_works(tmp_path, passages, embedder):
    folder = tmp_path / "idx"
    store_passages(folder, passages[:2], embedder, IndexConfig(index_type="hnsw"))
    _, changes = store_passages(folder, passages[:2], embedder, IndexConfig())
    assert (changes.added, changes.unchanged) == (0, 2)
    renamed = [p.model_copy(update={"text": p.text + " (updated)"}) for p in passages[:2]]
    index, changes = store_passages(folder, renamed, embedder, IndexConfig(), replace=True)
    assert changes.replaced == ["p1", "p2"] and [p.text for p in index.passages] == [p.text for p in renamed]


def test_removal_keeps_cdit_separations(passages, embedder):
    index = PassageIndex.build(passages, embedder, IndexConfig(index_type="hnsw"))
    index.apply_trim(TrimState(separated={("p1", "p3")}))
    index.remove({"p2"})
    hits = _ids(index, "capital city of France and Spain", 5)
    assert "p2" not in hits and not {"p1", "p3"} <= set(hits)


def test_an_id_held_by_another_document_is_refused_replacing_or_not(tmp_path, embedder):
    folder = tmp_path / "idx"
    plain = Passage(id="guide#1", title="Note", text="A note that happens to be named like a chunk.")
    store_passages(folder, [plain], embedder, IndexConfig())
    for replace in (False, True):
        with pytest.raises(PassageIdTaken, match="'guide#1' of document 'guide' is held by document 'guide#1'"):
            store_passages(folder, _corpus([]), embedder, IndexConfig(), replace=replace)
    assert [p.text for p in PassageIndex.load(folder, embedder).passages] == [plain.text]


def _dated(date: str) -> list[Passage]:
    """The long guide (three chunks) and a short note, each with a date and a source."""
    docs = [LONG.model_copy(update={"metadata": {"date": date, "source": "guide.org"}}),
            Passage(id="note", text="Harbour office hours.", metadata={"date": date, "meta": {"lang": "en"}})]
    return chunk_passages(docs, "test", chunk_size=40, chunk_overlap=0)


def _metadata(folder, embedder) -> dict[str, dict]:
    return {p.id: p.metadata for p in PassageIndex.load(folder, embedder).passages}


@pytest.mark.parametrize("streamed", [False, True])
def test_metadata_is_part_of_a_document_kept_through_add_replace_and_remove(tmp_path, embedder, streamed):
    folder = tmp_path / "idx"

    def write(passages: list[Passage], replace: bool = False):
        if streamed:
            return add_streaming(folder, lambda: iter(passages), embedder, IndexConfig(), replace=replace)
        return store_passages(folder, passages, embedder, IndexConfig(), replace=replace)

    write(_dated("2023-01-01"))
    stored = _metadata(folder, embedder)
    assert [stored[f"guide#{i}"] for i in range(3)] == [{"date": "2023-01-01", "source": "guide.org",
                                                          "source_id": "guide", "chunk": i} for i in range(3)]
    assert write(_dated("2023-01-01"))[1].unchanged == 4  # the same text and metadata: nothing to do
    with pytest.raises(DocumentConflict, match="'guide', 'note' already in the index with other text or metadata"):
        write(_dated("2024-06-01"))  # a new date under the same text is a change, never dropped silently
    assert _metadata(folder, embedder) == stored
    changes = write(_dated("2024-06-01"), replace=True)[1]
    assert changes.replaced == ["guide", "note"] and changes.removed == 4
    assert {m["date"] for m in _metadata(folder, embedder).values()} == {"2024-06-01"}
    remove_documents(folder, ["note"], embedder)
    assert [m["date"] for m in _metadata(folder, embedder).values()] == ["2024-06-01"] * 3
