"""Passages in SQLite: read by position and id on demand, the same index as one held in memory."""

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.index.passage_store import BATCH, PassageStore
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage


def _corpus(n: int) -> list[Passage]:
    return [Passage(id=f"p{i}", title=f"T{i % 3}", text=f"text {i} about river {i % 11}", metadata={"n": i})
            for i in range(n)]


def test_a_store_reads_by_position_and_id_in_batches(tmp_path):
    corpus = _corpus(BATCH + 5)  # iteration crosses a batch boundary
    PassageStore.write(tmp_path / "p.sqlite3", corpus)
    store = PassageStore(tmp_path / "p.sqlite3")
    assert len(store) == BATCH + 5 and store[0] == corpus[0] and store[-1] == corpus[-1]
    assert store[3:6] == corpus[3:6] and list(store) == corpus
    assert store.positions(["p7", "nope", f"p{BATCH + 1}"]) == {"p7": 7, f"p{BATCH + 1}": BATCH + 1}
    with pytest.raises(IndexError):
        store[BATCH + 5]


def test_a_loaded_index_reads_its_passages_from_sqlite_and_searches_as_built(tmp_path):
    embedder, corpus = HashEmbedder(), _corpus(60)
    built, _ = store_passages(tmp_path / "idx", corpus, embedder, IndexConfig(index_type="hnsw", bm25=True))
    loaded = PassageIndex.load(tmp_path / "idx", embedder)
    assert isinstance(loaded.passages, PassageStore)
    mapped = PassageIndex.load(tmp_path / "idx", embedder, mmap=True)  # BM25's matrix memory-mapped as well
    for mode in ("dense", "bm25", "hybrid"):
        assert loaded.search("river 4", 5, mode) == built.search("river 4", 5, mode) == mapped.search("river 4", 5, mode)
    assert loaded.vectors(["p9", "p2"]).tolist() == built.vectors(["p9", "p2"]).tolist()
    # a writer adds to what it loaded; the saved version, read back, holds both, in order
    store_passages(tmp_path / "idx", [Passage(id="new", text="a new text about river 4")], embedder, IndexConfig())
    again = PassageIndex.load(tmp_path / "idx", embedder)
    assert [p.id for p in again.passages] == [p.id for p in corpus] + ["new"]
    assert again.passages[0].metadata == {"n": 0}


def test_each_row_names_its_document_and_a_document_is_found_by_that_not_by_its_ids(tmp_path):
    chunks = [Passage(id=f"x#{i}", text=f"part {i}", metadata={"source_id": "x", "chunk": i}) for i in range(2)]
    plain = Passage(id="x#5", text="a document of its own")  # a chunk's shape, no chunk marks: its own document
    PassageStore.write(tmp_path / "p.sqlite3", [*chunks, plain])
    store = PassageStore(tmp_path / "p.sqlite3", verify=True)
    assert store.document_ids() == ["x", "x", "x#5"]
    assert store.owners(["x#1", "x#5", "nope"]) == {"x#1": "x", "x#5": "x#5"}
    assert store.documents(["x", "x#5", "nope"]) == {"x": chunks, "x#5": [plain]}


def test_a_later_chunks_document_head_is_read_from_the_store_or_the_built_list(tmp_path):
    rfc = [Passage(id=f"rfc#{i}", title="RFC 42", text=text, metadata={"source_id": "rfc", "chunk": i})
           for i, text in enumerate(["Status: Draft", "Summary: one approval", "Proposal: merge with one"])]
    page = Passage(id="page", text="Two approving reviews.")
    built, _ = store_passages(tmp_path / "idx", [*rfc, page], HashEmbedder(), IndexConfig())
    loaded = PassageIndex.load(tmp_path / "idx", HashEmbedder())
    assert isinstance(loaded.passages, PassageStore) and not isinstance(built.passages, PassageStore)
    for index in (loaded, built):
        assert index.heads([rfc[2], rfc[0], page, rfc[1]]) == {"rfc#2": rfc[0], "rfc#1": rfc[0]}  # heads asked for none
    assert loaded.passages.heads(["rfc", "page", "nope"]) == {"rfc": rfc[0], "page": page}


def test_damage_is_reported_naming_the_file_by_the_check_on_open_or_by_the_read_that_meets_it(tmp_path):
    path = tmp_path / "idx" / "data-1" / "p.sqlite3"
    path.parent.mkdir(parents=True)
    PassageStore.write(path, _corpus(300))
    unchecked = PassageStore(path)  # as index.mmap opens it: no page read yet
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    with path.open("r+b") as fh:
        fh.seek(len(data) // page // 2 * page)
        fh.write(b"\x00" * page)
    with pytest.raises(IndexStoreError, match=r"p\.sqlite3 is missing or damaged .*tanglerag index CORPUS --out .*idx$"):
        PassageStore(path, verify=True)
    assert unchecked.damage is None
    with pytest.raises(IndexStoreError, match="is missing or damaged"):
        list(unchecked)
    assert unchecked.damage is not None and str(path) in unchecked.damage
