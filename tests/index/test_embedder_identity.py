"""Vectors of two embedders never meet: an index, a user's contexts and a shards folder record the identity of the
embedder that made their vectors (the int8 MiniLM's differs from the fp32 one's though the model's name is the same),
and refuse another in one line that names both and how to go on; the dimension is checked where vectors meet the
index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tanglerag.config import IndexConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.embeddings import Embedder
from tanglerag.errors import ContextStoreError, IndexStoreError, IngestError
from tanglerag.index.passage_index import PassageIndex, embed_text, read_manifest
from tanglerag.index.ray_ingest import ShardEmbedder
from tanglerag.index.shard_build import build_from_shards
from tanglerag.index.shards import open_shards, plan_shards, record_embedder, shard_passages, write_shard
from tanglerag.index.streaming import build_streaming
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage


class Int8Hash(HashEmbedder):
    """The hashing embedder under the name and identity of the int8 MiniLM: the same model name, other vectors."""

    identity = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self) -> None:
        super().__init__("all-MiniLM-L6-v2", 384)


def fp32_minilm() -> HashEmbedder:
    """What the fp32 sentence-transformers MiniLM recorded: its model's name, 384 dimensions."""
    return HashEmbedder("all-MiniLM-L6-v2", 384)


def test_an_index_of_the_fp32_minilm_opened_with_the_default_embedder_says_so_in_one_line(tmp_path, passages):
    PassageIndex.build(passages, fp32_minilm(), IndexConfig()).save(tmp_path / "idx")
    with pytest.raises(IndexStoreError) as refused:
        PassageIndex.load(tmp_path / "idx", Embedder())  # the default: onnx int8, never loaded here
    said = str(refused.value)
    assert "\n" not in said and "'all-MiniLM-L6-v2'" in said and "'all-MiniLM-L6-v2-onnx-int8'" in said
    assert "rebuild it with `tanglerag index`" in said
    assert "--set embedding.backend=sentence-transformers --set embedding.model=all-MiniLM-L6-v2" in said


def test_an_index_records_its_embedders_identity_and_opens_with_it_alone(tmp_path, passages):
    PassageIndex.build(passages, Int8Hash(), IndexConfig()).save(tmp_path / "idx")
    assert read_manifest(tmp_path / "idx").embedding_model == "all-MiniLM-L6-v2-onnx-int8"
    assert len(PassageIndex.load(tmp_path / "idx", Int8Hash()).passages) == len(passages)
    with pytest.raises(IndexStoreError, match="--set embedding.backend=onnx --set embedding.model=all-MiniLM-L6-v2"):
        PassageIndex.load(tmp_path / "idx", fp32_minilm())
    build_streaming(tmp_path / "streamed", iter(passages), Int8Hash(), IndexConfig())
    assert read_manifest(tmp_path / "streamed").embedding_model == "all-MiniLM-L6-v2-onnx-int8"


def test_the_default_embedder_builds_and_reopens_its_own_index(tmp_path, passages):
    PassageIndex.build(passages, Embedder(), IndexConfig()).save(tmp_path / "idx")
    manifest = read_manifest(tmp_path / "idx")
    assert (manifest.embedding_model, manifest.dimension) == ("all-MiniLM-L6-v2-onnx-int8", 384)
    assert PassageIndex.load(tmp_path / "idx", Embedder()).search("capital of Spain", 1)[0].passage.id == "p3"


def test_an_embedder_of_another_dimension_is_refused_where_its_vectors_meet_the_index(tmp_path, passages):
    PassageIndex.build(passages, HashEmbedder("hash", 64), IndexConfig(bm25=True)).save(tmp_path / "idx")
    index = PassageIndex.load(tmp_path / "idx", HashEmbedder("hash", 32))
    assert index.search("Danube river", 1, mode="bm25")[0].passage.id == "p5"  # BM25 needs no vectors
    for meeting in (lambda: index.search("Danube river", 1), lambda: index.add([Passage(id="new", text="x y")])):
        with pytest.raises(IndexStoreError, match="vectors of 64 dimensions but the embedder 'hash' makes 32"):
            meeting()


def test_a_users_contexts_refuse_an_embedder_of_another_identity(tmp_path):
    UserContextStore(tmp_path, fp32_minilm()).add("ann", ["I live in Bonn."])
    with pytest.raises(ContextStoreError, match="embedded with 'all-MiniLM-L6-v2', not the configured "
                                                "'all-MiniLM-L6-v2-onnx-int8'"):
        UserContextStore(tmp_path, Int8Hash()).list("ann")


def _corpus(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"passage {i} about the river"}) + "\n"
                            for i in range(12)))
    return path


def test_shards_record_their_embedder_and_the_index_built_from_them_too(tmp_path):
    plan = plan_shards(_corpus(tmp_path / "corpus.jsonl"), IndexConfig(), "all-MiniLM-L6-v2", documents_per_shard=5)
    folder = tmp_path / "shards"
    todo = open_shards(folder, plan)
    actor = ShardEmbedder(plan.model_dump_json(), str(folder), Int8Hash, DEFAULT_AUTHORITY_TIERS)  # as Ray builds it
    assert list(actor({"shard": np.array(todo)})["error"]) == [""] * len(todo)
    with pytest.raises(IngestError, match="embedded by 'all-MiniLM-L6-v2-onnx-int8', not the configured "
                                          "'all-MiniLM-L6-v2'"):
        record_embedder(folder, plan, "all-MiniLM-L6-v2")  # a rerun with the fp32 model would mix its vectors in
    build_from_shards(tmp_path / "idx", folder, IndexConfig())
    assert read_manifest(tmp_path / "idx").embedding_model == "all-MiniLM-L6-v2-onnx-int8"


def test_shards_from_before_the_record_are_the_plans_model_names(tmp_path):
    plan = plan_shards(_corpus(tmp_path / "corpus.jsonl"), IndexConfig(), "all-MiniLM-L6-v2", documents_per_shard=5)
    folder, fp32 = tmp_path / "shards", fp32_minilm()
    for number in open_shards(folder, plan)[:1]:  # one shard embedded by a release that recorded no embedder
        passages = shard_passages(plan, number)
        write_shard(folder, number, passages, fp32.embed([embed_text(p) for p in passages]))
    with pytest.raises(IngestError, match="embedded by 'all-MiniLM-L6-v2'"):
        record_embedder(folder, plan, "all-MiniLM-L6-v2-onnx-int8")
    record_embedder(folder, plan, "all-MiniLM-L6-v2")
