"""Answer questions on a Ray cluster: a pool of actors, each with its own runtime, answering batches.

Ray core actors rather than Ray Data's ``map_batches``: a batch's result is nested typed predictions with
traces, not table rows, so Ray Data would only add a conversion to Arrow and back; actors give the two things
this needs directly: a runtime (model, embedder, index) loaded once per actor, and Ray's own retry of an
actor's tasks when its process dies (``max_restarts`` / ``max_task_retries``), so a killed actor's batch is
answered again by its restarted self and every question comes back once.

On a cluster every node must have tanglerag installed and see the index folder at the same path (a shared
file system); each actor keeps the LLM cache of its own node (``cache_dir``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from tanglerag.datasets.base import QAExample
from tanglerag.errors import ConfigError
from tanglerag.eval.engines.local import answer_locally
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import QuestionWorker
from tanglerag.runtime import Runtime

log = logging.getLogger(__name__)
RETRIES = 3  # restarts of a dead actor, and retries of the batch it was answering


class _Answerer:
    """One actor: builds its worker once, then answers the batches it is given, ``concurrency`` questions at
    a time (default: what its backend serves at once, e.g. a shared vLLM endpoint's ``llm.concurrency``), on the
    same event loop engine as a local run."""

    def __init__(self, make_runtime: Callable[[], Runtime], methods: list[str], metrics: list[str],
                 pool: list[QAExample], concurrency: int | None) -> None:
        self.worker = QuestionWorker(make_runtime(), methods, metrics, pool)
        self.concurrency = concurrency or self.worker.runtime.llm.backend.max_concurrency

    def answer(self, batch: list[QAExample]) -> list[QuestionResult]:
        return list(answer_locally(self.worker, batch, self.concurrency))


def answer_on_ray(make_runtime: Callable[[], Runtime], methods: list[str], metrics: list[str],
                  pool: list[QAExample], examples: list[QAExample], *, actors: int, batch_size: int,
                  concurrency: int | None = None, address: str | None = None,
                  actor_cpus: float = 1.0) -> Iterator[list[QuestionResult]]:
    """Yield each batch's results as it comes back; batches in completion order."""
    ray = _connect(address)
    remote = ray.remote(_Answerer).options(num_cpus=actor_cpus, max_restarts=RETRIES, max_task_retries=RETRIES)
    shared_pool = ray.put(pool)  # sent to the object store once, not once per actor
    handles = [remote.remote(make_runtime, methods, metrics, shared_pool, concurrency) for _ in range(max(1, actors))]
    batches = [examples[i:i + batch_size] for i in range(0, len(examples), batch_size)]
    try:
        yield from ray.util.ActorPool(handles).map_unordered(_submit, batches)
    finally:
        for handle in handles:
            ray.kill(handle)


def _submit(actor: Any, batch: list[QAExample]) -> Any:
    return actor.answer.remote(batch)


def _connect(address: str | None) -> Any:
    """Join the cluster at ``address`` (or start a local Ray instance); the extra is optional."""
    try:
        import ray
        import ray.util
    except ImportError as exc:
        raise ConfigError("--engine ray needs Ray: pip install 'tanglerag[ray]'") from exc
    if not ray.is_initialized():
        log.info("connecting to Ray at %s", address or "a new local instance")
        try:
            ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
        except ConnectionError as exc:
            raise ConfigError(f"could not join the Ray cluster at {address}: {exc}") from exc
    return ray
