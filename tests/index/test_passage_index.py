import faiss
import numpy as np
import pytest

from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import IndexStoreError, PassageIndex, read_manifest
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_round_trip_keeps_results(tmp_path, passages, embedder, index_type):
    idx = PassageIndex.build(passages, embedder, IndexConfig(index_type=index_type))
    before = [(h.passage.id, round(h.score, 5)) for h in idx.search("capital of Spain", 3)]
    assert before[0][0] == "p3"
    idx.save(tmp_path / "idx")
    loaded = PassageIndex.load(tmp_path / "idx", embedder)
    assert [(h.passage.id, round(h.score, 5)) for h in loaded.search("capital of Spain", 3)] == before
    manifest = read_manifest(tmp_path / "idx")
    assert (manifest.index_type, manifest.count, manifest.dimension, manifest.embedding_model) == \
        (index_type, 5, 64, "hash-64")


def test_bm25_and_hybrid(tmp_path, passages, embedder):
    idx = PassageIndex.build(passages, embedder, IndexConfig(bm25=True))
    assert idx.search("Danube river", 2, mode="bm25")[0].passage.id == "p5"
    idx.save(tmp_path / "idx")
    loaded = PassageIndex.load(tmp_path / "idx", embedder)
    hybrid = loaded.search("seven hills Italy", 3, mode="hybrid")
    assert hybrid[0].passage.id == "p4" and [h.rank for h in hybrid] == [1, 2, 3]
    assert loaded.search("the of and", 3, mode="bm25") == []


def test_bm25_missing_is_a_clear_error(passages, embedder):
    idx = PassageIndex.build(passages, embedder, IndexConfig())
    with pytest.raises(IndexStoreError, match="--bm25"):
        idx.search("x", 1, mode="bm25")


def test_incremental_add_skips_known_ids(tmp_path, passages, embedder):
    idx = PassageIndex.build(passages[:3], embedder, IndexConfig(bm25=True))
    idx.save(tmp_path / "idx")
    loaded = PassageIndex.load(tmp_path / "idx", embedder)
    assert loaded.add(passages).added == 2
    loaded.save(tmp_path / "idx")
    again = PassageIndex.load(tmp_path / "idx", embedder)
    assert len(again.passages) == 5 and again.dense.ntotal == 5
    assert again.search("Danube Vienna", 1)[0].passage.id == "p5"
    assert again.search("Danube Vienna", 1, mode="bm25")[0].passage.id == "p5"


def test_refuses_other_embedding_model(tmp_path, passages, embedder):
    PassageIndex.build(passages, embedder, IndexConfig()).save(tmp_path / "idx")
    with pytest.raises(IndexStoreError, match="built with embedding model 'hash-64'.*'other'"):
        PassageIndex.load(tmp_path / "idx", HashEmbedder("other"))


def test_interrupted_save_keeps_previous_index(tmp_path, passages, embedder, monkeypatch):
    PassageIndex.build(passages[:2], embedder, IndexConfig()).save(tmp_path / "idx")
    bigger = PassageIndex.build(passages, embedder, IndexConfig())

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(faiss, "write_index", boom)
    with pytest.raises(KeyboardInterrupt):
        bigger.save(tmp_path / "idx")
    monkeypatch.undo()
    assert len(PassageIndex.load(tmp_path / "idx", embedder).passages) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # no staging leftovers


def test_bad_folders(tmp_path, embedder):
    with pytest.raises(IndexStoreError, match="no manifest.json"):
        PassageIndex.load(tmp_path, embedder)
    (tmp_path / "manifest.json").write_text("{broken")
    with pytest.raises(IndexStoreError, match="corrupt"):
        PassageIndex.load(tmp_path, embedder)
    with pytest.raises(IndexStoreError, match="empty corpus"):
        PassageIndex.build([], embedder, IndexConfig())


def test_ivf_with_many_passages_uses_several_lists(embedder):
    many = [Passage(id=str(i), text=f"document number {i} about topic {i % 17}") for i in range(400)]
    idx = PassageIndex.build(many, embedder, IndexConfig(index_type="ivf", ivf_nprobe=4))
    assert idx.dense.nlist > 1 and idx.dense.nprobe == 4
    assert len(idx.search("topic 3", 5)) == 5


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_stored_vectors_are_read_back_without_re_embedding(index_type):
    from tanglerag.index.passage_index import embed_text

    embedder = HashEmbedder()
    passages = [Passage(id=f"p{i}", title=f"T{i % 4}", text=f"word{i} topic{i % 7} thing{i % 3}") for i in range(80)]
    index = PassageIndex.build(passages, embedder, IndexConfig(index_type=index_type))
    for _ in range(2):  # IVF builds its id map once, on the first call
        vectors = index.vectors(["p5", "p70"])
        assert np.allclose(vectors, embedder.embed([embed_text(passages[5]), embed_text(passages[70])]), atol=1e-6)
    with pytest.raises(IndexStoreError, match="not in this index"):
        index.vectors(["nope"])
