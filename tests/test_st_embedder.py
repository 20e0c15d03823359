"""The sentence-transformers backend (the ``st`` extra): loading, devices, one model a process, the GPU's overlapped
tokenizing. Skipped where the extra is not installed."""

from __future__ import annotations

import numpy as np
import pytest

from tanglerag.config import EmbeddingConfig
from tanglerag.embeddings import Embedder
from tanglerag.st_embedder import SentenceTransformerEmbedder, encode_overlapped

pytestmark = pytest.mark.xdist_group("torch")  # the tests that load torch (MiniLM, a reader) share a worker

ST = EmbeddingConfig(backend="sentence-transformers")


@pytest.fixture(autouse=True, scope="module")
def _the_st_extra():
    """Skipped where the extra is not installed; imported when these tests run rather than at collection (torch:
    seconds in every pytest worker)."""
    pytest.importorskip("sentence_transformers")


def test_the_backend_setting_chooses_sentence_transformers_and_keeps_the_model_name_as_identity():
    embedder = Embedder(ST)
    assert isinstance(embedder.backend, SentenceTransformerEmbedder)
    assert embedder.identity == embedder.model_name == "all-MiniLM-L6-v2"  # what indexes before backends recorded


def test_auto_device_takes_the_gpu_when_torch_has_one_and_the_cpu_otherwise():
    embedder = SentenceTransformerEmbedder(ST)  # device: auto
    assert embedder.device is None  # sentence-transformers then picks CUDA / MPS / CPU itself
    vectors = embedder.embed(["Bonn was the capital of West Germany."])
    assert vectors.shape == (1, 384) and vectors.dtype == np.float32
    import torch  # here, not at the top: every pytest-xdist worker collects this module, few run it

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert embedder._load().device.type == expected


def test_a_named_device_is_passed_through():
    assert SentenceTransformerEmbedder(ST.model_copy(update={"device": "cpu"})).device == "cpu"
    assert SentenceTransformerEmbedder(ST.model_copy(update={"device": "cuda:1"})).device == "cuda:1"


def test_runtimes_built_one_after_another_share_one_loaded_model():
    first, second = SentenceTransformerEmbedder(ST), SentenceTransformerEmbedder(ST)
    first.embed(["one"])
    second.embed(["two"])
    assert first._load() is second._load() and first._lock is second._lock
    other = SentenceTransformerEmbedder(ST.model_copy(update={"device": "cpu"}))
    assert other._load() is not first._load()  # another device, another copy


def test_tokenizing_beside_the_model_gives_encodes_vectors_in_the_texts_order():
    texts = [f"Passage {i}: " + "the river floods the mill " * (i % 4) + f"in year {1900 + i}." for i in range(17)]
    model = SentenceTransformerEmbedder(ST)._load()
    plain = model.encode(texts, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    overlapped = encode_overlapped(model, texts, 4, normalize=True)  # five batches, tokenized one ahead
    assert overlapped.shape == (17, 384) and np.allclose(overlapped, plain, atol=1e-5)
    assert not np.allclose(overlapped[0], overlapped[1], atol=1e-3)  # rows are not all one vector


def test_the_minilm_tests_share_one_worker(request):
    """Under ``--dist loadgroup`` this module's group reaches pytest-xdist (it names the group in the node id);
    with pytest 9.2 and xdist 3.8 the group was dropped without a word and every worker loaded MiniLM."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@torch")
