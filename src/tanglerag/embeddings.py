"""Sentence embeddings: what indexes need from an embedder, and the configured one.

``embedding.backend`` picks how, from ``EMBEDDERS``: ``onnx`` (the default) runs the int8 MiniLM on onnxruntime
without torch (``onnx_embedder.py``); ``sentence-transformers`` runs any model, on a GPU where torch has one
(``st_embedder.py``, an extra); a plug-in adds one through the ``tanglerag.embedders`` entry-point group. Each module
is imported when its backend is chosen.

An embedder's *identity* names the vectors it makes: indexes, user contexts and the embedding cache record it, so
that vectors of two embedders are never searched or read back together. It is the model's name for
sentence-transformers (as every index recorded before backends) and for embedders that name none (a plug-in's, the
tests' hashing one), and a name of its own for a backend whose vectors differ (``all-MiniLM-L6-v2-onnx-int8``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.registry import Registry


class TextEmbedder(Protocol):
    """What indexes need from an embedder (tests use a hashing stand-in)."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray: ...


def embedder_identity(embedder: TextEmbedder) -> str:
    """The name of the vectors ``embedder`` makes: its ``identity`` where it has one, else its model's name."""
    return str(getattr(embedder, "identity", None) or embedder.model_name)


def settings_making(identity: str) -> str:
    """The settings under which the configured embedder makes vectors of ``identity`` (for messages)."""
    from tanglerag.onnx_embedder import ONNX_MODELS

    names = [name for name, model in ONNX_MODELS.items() if model.identity == identity]
    if names:
        return f"--set embedding.backend=onnx --set embedding.model={names[0]}"
    return (f"--set embedding.backend=sentence-transformers --set embedding.model={identity} "
            "(pip install 'tanglerag[st]')")


class EmbedderBackend(TextEmbedder, Protocol):
    """What an ``embedding.backend`` builds from the settings: an embedder that names its vectors and loads its
    model at ``warm_up`` (construction is cheap)."""

    @property
    def identity(self) -> str: ...

    def warm_up(self) -> None: ...


EMBEDDERS: Registry[Callable[[EmbeddingConfig], EmbedderBackend]] = Registry("embedder",
                                                                            group="tanglerag.embedders")
"""``embedding.backend`` names: each a class built from the ``embedding`` section."""
EMBEDDERS.register_lazy("onnx", "tanglerag.onnx_embedder:OnnxEmbedder")
EMBEDDERS.register_lazy("sentence-transformers", "tanglerag.st_embedder:SentenceTransformerEmbedder", extra="st")


class Embedder:
    """The embedder ``embedding.backend`` names, built cheaply (its model loads at ``warm_up`` or the first embed);
    ConfigError for settings its backend cannot run (onnx with a model it has no file for, a missing extra)."""

    def __init__(self, config: EmbeddingConfig | None = None) -> None:
        self.config = config or EmbeddingConfig()
        self.backend = EMBEDDERS.get(self.config.backend)(self.config)

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def identity(self) -> str:
        return self.backend.identity

    @property
    def dimension(self) -> int:
        return self.backend.dimension

    def warm_up(self) -> None:
        self.backend.warm_up()

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        return self.backend.embed(texts, show_progress=show_progress)
