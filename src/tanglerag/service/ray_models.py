"""The model and the query embedder as Ray Serve deployments of their own, which the service's replicas share.

Why: the embedded model is ~1 GB and two CPU threads a copy. With it loaded in every service replica, N replicas hold N
copies and answer no faster than the cores allow, while most of a replica's work (routes, retrieval, the methods'
rules) needs no model. As a deployment of its own (``service.model_replicas``) the model is loaded once a model replica
and every service replica calls it through a Serve handle, so app replicas scale with the requests and model replicas
with the model's throughput. The query embedder likewise (``service.embedding_replicas``): each question is one short
text, and ``serve.batch`` gathers the ones that arrive together from all service replicas into one call of the
embedder (``service.embedding_batch_size``, ``embedding_batch_wait_s``), as an embedder runs best.

Each deployment is built from a recipe (a callable) run in its replica, so nothing heavy crosses from the driver; the
service replica's side is an ordinary LLM backend (``ServedModel``) and an ordinary embedder (``ServedEmbedder``), so
the runtime, its LLM client and cache, and the methods are the same code whichever engine serves them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tanglerag.config import ServiceConfig
from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.llm.base import GenerationParams, LLMBackend, RawCompletion
from tanglerag.trace import Message

MODEL_DEPLOYMENT = "tanglerag-model"
EMBEDDING_DEPLOYMENT = "tanglerag-embedding"


def model_class() -> Any:
    """The model deployment (its class, decorated): a backend built in the replica and loaded before it takes a
    request."""
    from ray import serve

    @serve.deployment(name=MODEL_DEPLOYMENT, health_check_period_s=5)
    class ModelReplica:
        def __init__(self, make_backend: Callable[[], LLMBackend]) -> None:
            self._backend = make_backend()
            self._backend.warm_up()
            self.calls = 0

        def served(self) -> int:
            """How many calls this replica answered (what tests and an operator's probe read)."""
            return self.calls

        async def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
            self.calls += 1
            return await self._generated(messages, params)

        async def stream(self, messages: list[Message], params: GenerationParams) -> AsyncIterator[str | RawCompletion]:
            """The reply's pieces as the backend writes them, then the whole completion (a backend that cannot
            stream: the completion alone)."""
            self.calls += 1
            loop, pieces = asyncio.get_running_loop(), asyncio.Queue[str]()

            def heard(piece: str) -> None:  # on the backend's thread, or on this loop
                loop.call_soon_threadsafe(pieces.put_nowait, piece)

            done = asyncio.ensure_future(self._streamed(messages, params, heard))
            while not (done.done() and pieces.empty()):
                waiting = asyncio.ensure_future(pieces.get())
                await asyncio.wait({waiting, done}, return_when=asyncio.FIRST_COMPLETED)
                if waiting.done():
                    yield waiting.result()
                else:
                    waiting.cancel()
            yield done.result()

        async def _generated(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
            if (agenerate := getattr(self._backend, "agenerate", None)) is not None:
                return await agenerate(messages, params)  # type: ignore[no-any-return]
            return await asyncio.to_thread(self._backend.generate, messages, params)

        async def _streamed(self, messages: list[Message], params: GenerationParams,
                            heard: Callable[[str], None]) -> RawCompletion:
            """The backend's streaming form (``astream``, or ``stream`` in a thread) handing ``heard`` each piece."""
            if (astream := getattr(self._backend, "astream", None)) is not None:
                return await astream(messages, params, heard)  # type: ignore[no-any-return]
            if (stream := getattr(self._backend, "stream", None)) is not None:
                return await asyncio.to_thread(stream, messages, params, heard)
            return await self._generated(messages, params)

    return ModelReplica


def embedding_class(config: ServiceConfig) -> Any:
    """The query-embedding deployment (its class, decorated): one embedder call for the questions that arrive
    together."""
    from ray import serve

    @serve.deployment(name=EMBEDDING_DEPLOYMENT, health_check_period_s=5)
    class EmbeddingReplica:
        def __init__(self, make_embedder: Callable[[], TextEmbedder]) -> None:
            self._embedder = make_embedder()
            warm_up = getattr(self._embedder, "warm_up", None)
            if warm_up is not None:
                warm_up()
            self.batches: list[int] = []

        def batch_sizes(self) -> list[int]:
            """The size of each batch embedded so far."""
            return list(self.batches)

        @serve.batch(max_batch_size=config.embedding_batch_size, batch_wait_timeout_s=config.embedding_batch_wait_s)
        async def embed(self, texts: list[str]) -> list[np.ndarray]:
            self.batches.append(len(texts))
            return list(await asyncio.to_thread(self._embedder.embed, texts))

    return EmbeddingReplica


class ServedModel:
    """An LLM backend that is a handle to the model deployment: a service replica's calls go to a model replica."""

    name = "serve"

    def __init__(self, handle: Any, model_id: str, concurrency: int) -> None:
        self._handle, self._model_id, self._concurrency = handle, model_id, concurrency

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def max_concurrency(self) -> int:
        return self._concurrency

    def warm_up(self) -> None:
        """The model replicas loaded the model before Serve reported them running."""

    def not_ready(self) -> str | None:
        return None

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        return self._handle.generate.remote(messages, params).result()  # type: ignore[no-any-return]

    async def agenerate(self, messages: list[Message], params: GenerationParams) -> RawCompletion:
        return await self._handle.generate.remote(messages, params)  # type: ignore[no-any-return]

    async def astream(self, messages: list[Message], params: GenerationParams,
                      on_text: Callable[[str], None]) -> RawCompletion:
        async for item in self._handle.options(stream=True).stream.remote(messages, params):
            if isinstance(item, RawCompletion):
                return item
            on_text(item)
        raise RuntimeError("the model deployment's stream ended without its completion")


@dataclass(frozen=True)
class ServedEmbedder:
    """An embedder that is a handle to the query-embedding deployment, named as the embedder it stands for (the index
    checks that its vectors are of the model it was built with)."""

    handle: Any
    model_name: str
    identity: str
    dimension: int

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        """Each text a request of its own, so that the deployment batches them with other replicas' questions;
        called from a worker thread (retrieval runs in one), never on the event loop."""
        pending = [self.handle.embed.remote(text) for text in texts]
        return np.stack([response.result() for response in pending]) if pending else \
            np.zeros((0, self.dimension), dtype=np.float32)

    @classmethod
    def standing_for(cls, handle: Any, embedder: TextEmbedder) -> ServedEmbedder:
        return cls(handle, embedder.model_name, embedder_identity(embedder), embedder.dimension)
