"""Passages in SQLite: read by position and id on demand, the same index as one held in memory."""

import pytest

from tanglerag.config import IndexConfig
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
