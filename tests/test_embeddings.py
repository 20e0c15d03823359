from __future__ import annotations

import torch

from tanglerag.config import EmbeddingConfig
from tanglerag.embeddings import Embedder


def test_auto_device_takes_the_gpu_when_torch_has_one_and_the_cpu_otherwise():
    embedder = Embedder()  # device: auto
    assert embedder.device is None  # sentence-transformers then picks CUDA / MPS / CPU itself
    vectors = embedder.embed(["Bonn was the capital of West Germany."])
    assert vectors.shape == (1, 384)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert embedder._load().device.type == expected


def test_a_named_device_is_passed_through():
    assert Embedder(EmbeddingConfig(device="cpu")).device == "cpu"
    assert Embedder(EmbeddingConfig(device="cuda:1")).device == "cuda:1"
