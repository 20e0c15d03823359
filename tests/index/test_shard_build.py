"""The build from shards: flat and IVF-PQ files written from the shards' vectors piece by piece are faiss's own
bytes, and every index type gives the local streamed build's passages and search results."""

import json
from pathlib import Path

import faiss
import numpy as np
import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.faiss_stream import write_flat, write_refined
from tanglerag.index.passage_index import PassageIndex, embed_text
from tanglerag.index.shard_build import DENSE, build_from_shards
from tanglerag.index.shards import (
    PASSAGES,
    VECTORS,
    open_shards,
    plan_shards,
    read_shard,
    shard_file,
    shard_passages,
    write_shard,
)
from tanglerag.index.streaming import build_streaming
from tanglerag.ingest import stream_corpus
from tanglerag.testing import HashEmbedder


def test_streamed_faiss_files_are_faiss_own_bytes(tmp_path):
    x = np.random.default_rng(0).standard_normal((3000, 16)).astype("float32")
    blocks = lambda: [x[:1000], x[1000:2500], x[2500:]]  # noqa: E731
    flat = faiss.IndexFlatIP(16)
    flat.add(x)
    write_flat(tmp_path / "flat.faiss", 16, 3000, blocks)
    assert (tmp_path / "flat.faiss").read_bytes() == faiss.serialize_index(flat).tobytes()

    ivfpq = faiss.IndexIVFPQ(faiss.IndexFlatIP(16), 16, 4, 4, 4, faiss.METRIC_INNER_PRODUCT)
    refined = faiss.IndexRefineFlat(ivfpq)
    refined.train(x)
    refined.k_factor = 16.0
    codes_only = faiss.clone_index(ivfpq)  # trained the same, no vectors yet
    refined.add(x)
    for block in blocks():
        codes_only.add(block)
    write_refined(tmp_path / "refined.faiss", codes_only, 16.0, blocks)
    assert (tmp_path / "refined.faiss").read_bytes() == faiss.serialize_index(refined).tobytes()
    with pytest.raises(ValueError, match="2999 vectors written, 3000 announced"):
        write_flat(tmp_path / "short.faiss", 16, 3000, lambda: [x[:2999]])


def _corpus(path: Path, n: int) -> Path:
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(300)]
    path.write_text("".join(json.dumps({"id": f"p{i}", "title": f"T{i % 9}",
                                        "text": " ".join(rng.choice(words, 12 + i % 30))}) + "\n" for i in range(n)))
    return path


def _embed_here(corpus: Path, folder: Path, config: IndexConfig, per_shard: int) -> None:
    """Shards as the Ray actors write them, embedded in this process."""
    plan = plan_shards(corpus, config, "hash-64", documents_per_shard=per_shard)
    embedder = HashEmbedder()
    for number in open_shards(folder, plan):
        passages = shard_passages(plan, number)
        write_shard(folder, number, passages, embedder.embed([embed_text(p) for p in passages]))


def _dense_bytes(folder: Path) -> bytes:
    return (folder / json.loads((folder / "manifest.json").read_text())["data"] / DENSE).read_bytes()


@pytest.mark.parametrize("config", [
    IndexConfig(index_type="flat", bm25=True), IndexConfig(index_type="hnsw"), IndexConfig(index_type="ivf"),
    IndexConfig(index_type="ivfpq", pq_nbits=4), IndexConfig(index_type="ivfpq", pq_nbits=4, pq_refine=0),
], ids=["flat+bm25", "hnsw", "ivf", "ivfpq", "ivfpq-codes-only"])
def test_every_index_type_gives_the_local_builds_index(tmp_path, config):
    corpus = _corpus(tmp_path / "corpus.jsonl", 1500)
    _embed_here(corpus, tmp_path / "shards", config, per_shard=400)
    build_from_shards(tmp_path / "sharded", tmp_path / "shards", config)
    build_streaming(tmp_path / "local", stream_corpus(corpus, chunk_size=config.chunk_words,
                                                      chunk_overlap=config.chunk_overlap), HashEmbedder(), config)
    sharded, local = (PassageIndex.load(tmp_path / name, HashEmbedder()) for name in ("sharded", "local"))
    assert [p.model_dump() for p in sharded.passages] == [p.model_dump() for p in local.passages]
    if config.index_type in ("flat", "ivfpq"):  # written piece by piece: the same file
        assert _dense_bytes(tmp_path / "sharded") == _dense_bytes(tmp_path / "local")
    for query in ("w1 w2 w3", "w17 w250", "T4 w99"):
        assert [(h.passage.id, round(h.score, 5)) for h in sharded.search(query, 5)] == [
            (h.passage.id, round(h.score, 5)) for h in local.search(query, 5)]
    mapped = PassageIndex.load(tmp_path / "sharded", HashEmbedder(), mmap=True)
    assert [h.passage.id for h in mapped.search("w1 w2 w3", 5)] == [h.passage.id for h in sharded.search("w1 w2 w3", 5)]


def test_a_shard_missing_or_vectors_that_do_not_match_are_refused(tmp_path):
    config = IndexConfig(index_type="flat")
    corpus = _corpus(tmp_path / "corpus.jsonl", 30)
    _embed_here(corpus, tmp_path / "shards", config, per_shard=10)
    vectors = shard_file(tmp_path / "shards", 1, VECTORS)
    np.save(vectors, np.load(vectors)[:-1])
    with pytest.raises(IndexStoreError, match="29 vectors for 30 passages"):
        build_from_shards(tmp_path / "idx", tmp_path / "shards", config)
    vectors.unlink()
    with pytest.raises(IndexStoreError, match="1 shard.* not embedded yet .first: 1"):
        build_from_shards(tmp_path / "idx", tmp_path / "shards", config)
    assert not (tmp_path / "idx" / "manifest.json").exists()


@pytest.mark.parametrize("damage", [b"\x93NUMPY", None], ids=["cut-in-its-header", "cut-in-its-rows"])
def test_a_damaged_vectors_file_says_to_embed_the_shard_again(tmp_path, damage):
    """A vectors file cut short (a disk fault, a copy that stopped) was a numpy traceback; it is the shard's damage,
    said in one line with what mends it, and no index is named."""
    config, folder = IndexConfig(index_type="flat"), tmp_path / "shards"
    _embed_here(_corpus(tmp_path / "corpus.jsonl", 30), folder, config, per_shard=10)
    vectors = shard_file(folder, 2, VECTORS)
    vectors.write_bytes(damage if damage is not None else vectors.read_bytes()[:-100])
    for attempt in (lambda: build_from_shards(tmp_path / "idx", folder, config), lambda: read_shard(folder, 2)):
        with pytest.raises(IndexStoreError, match=r"shard-000002.npy is missing or damaged .*remove the shard's "
                                                  r"files \(shard-000002\.\*\) and run the command again"):
            attempt()
    assert not (tmp_path / "idx" / "manifest.json").exists()


def test_a_shard_written_as_json_lines_by_an_older_release_is_embedded_again(tmp_path):
    """Shards now hold their passages as a store the build copies inside SQLite; a folder of an older release
    (passages as JSON lines beside the vectors) has no such store, so its shards count as missing, not as broken."""
    config, folder = IndexConfig(index_type="flat"), tmp_path / "shards"
    corpus = _corpus(tmp_path / "corpus.jsonl", 30)
    _embed_here(corpus, folder, config, per_shard=10)
    passages, vectors = read_shard(folder, 1)
    assert [p.id for p in passages] == [f"p{i}" for i in range(10, 20)] and vectors.shape == (10, 64)
    older = shard_file(folder, 1, PASSAGES)
    older.with_suffix(".jsonl").write_text("".join(p.model_dump_json() + "\n" for p in passages))
    older.unlink()
    plan = plan_shards(corpus, config, "hash-64", documents_per_shard=10)
    assert open_shards(folder, plan) == [1]
    _embed_here(corpus, folder, config, per_shard=10)
    build_from_shards(tmp_path / "idx", folder, config)
    assert [p.id for p in PassageIndex.load(tmp_path / "idx", HashEmbedder()).passages] == [f"p{i}" for i in range(30)]


def test_a_damaged_shard_store_says_to_embed_the_shard_again(tmp_path):
    """A shard's store SQLite cannot read is mended by removing the shard, not by StoreDamaged's advice for an
    index (which named the shards folder as the index to rebuild)."""
    config, folder = IndexConfig(index_type="flat"), tmp_path / "shards"
    _embed_here(_corpus(tmp_path / "corpus.jsonl", 30), folder, config, per_shard=10)
    shard_file(folder, 1, PASSAGES).write_bytes(b"x" * 4096)
    for attempt in (lambda: build_from_shards(tmp_path / "idx", folder, config), lambda: read_shard(folder, 1)):
        with pytest.raises(IndexStoreError, match=r"shard-000001.sqlite3 is missing or damaged .*remove the shard's "
                                                  r"files \(shard-000001\.\*\) and run the command again") as caught:
            attempt()
        assert "--out" not in str(caught.value)
    assert not (tmp_path / "idx" / "manifest.json").exists()
