"""``tanglerag serve --engine ray``: the service as Ray Serve replicas behind Serve's HTTP proxy.

Why Ray Serve rather than a home-made pool: it already spreads requests over replicas, starts a replacement for one
that dies, scales between bounds by the requests in progress, and runs on one machine or a cluster alike; evaluation
and ingest run on Ray already. Each replica is the one-process service unchanged (``create_app`` over a runtime of
its own, built in the replica by ``make_runtime``): the routes, errors, streaming and admission are the same code
whichever engine serves them, and a replica keeps only what docs/scale.md says a replica keeps (its loaded index
version, its LLM cache, its gate).

>>> start(functools.partial(Runtime, settings, index_dir=Path("idx")), settings.service, blocking=True)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tanglerag.config import LLMConfig, ServiceConfig
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.errors import ConfigError
from tanglerag.llm.base import LLMBackend
from tanglerag.llm.factory import build_backend, build_llm
from tanglerag.runtime import Runtime
from tanglerag.service.auth import ApiKeys
from tanglerag.service.ray_models import ServedEmbedder, ServedModel, embedding_class, model_class
from tanglerag.settings import Settings

APP_NAME = "tanglerag"
"""The Serve application (and its deployment's) name: ``serve status`` and the replicas' actor names show it."""
UNSET_RUNNING = 64
"""Requests a replica is handed beyond its queue when ``service.max_running`` is unset."""


def _ray() -> Any:
    try:
        import ray
        from ray import serve
    except ImportError:
        raise ConfigError("serve --engine ray needs Ray Serve: pip install 'tanglerag[ray]'") from None
    return ray, serve


@dataclass(frozen=True)
class Shared:
    """The recipes of what the service replicas may share as deployments of their own (``service.model_replicas``,
    ``service.embedding_replicas``): the model backend and the query embedder, each built in its own replica, and
    what a service replica needs to stand in for them (the LLM client's settings, the embedder's names)."""

    make_backend: Callable[[], LLMBackend]
    make_embedder: Callable[[], TextEmbedder]
    llm: LLMConfig
    cache_dir: Path

    @classmethod
    def of(cls, settings: Settings) -> Shared:
        return cls(functools.partial(build_backend, settings.llm, settings.cache_dir),
                   functools.partial(Embedder, settings.embedding), settings.llm, settings.cache_dir)

    def parts(self, model: Any, embedding: Any, config: ServiceConfig) -> dict[str, Any]:
        """A service replica's runtime's ``llm`` and ``embedder`` over the deployments' handles (None: its own)."""
        out: dict[str, Any] = {}
        if model is not None:
            backend = self.make_backend()  # cheap: a backend loads its model at warm_up, which this one never gets
            served = ServedModel(model, backend.model_id, backend.max_concurrency * config.model_replicas)
            out["llm"] = build_llm(self.llm, self.cache_dir, backend=served)
        if embedding is not None:
            out["embedder"] = ServedEmbedder.standing_for(embedding, self.make_embedder())
        return out


def replica_class() -> type:
    """The deployment's class: each replica builds its runtime and the service app after it starts (Serve's
    ``__serve_build_asgi_app__``), so nothing heavy crosses from the driver but the recipe; with the model or the
    embedder deployed on their own, over handles to them."""
    _, serve = _ray()

    @serve.ingress()
    class ServiceReplica:
        def __init__(self, make_runtime: Callable[..., Runtime], keys: ApiKeys, runs_dir: Path | None,
                     shared: Shared | None = None, model: Any = None, embedding: Any = None,
                     config: ServiceConfig | None = None) -> None:
            self._make_runtime, self._keys, self._runs_dir = make_runtime, keys, runs_dir
            self._parts = shared.parts(model, embedding, config or ServiceConfig()) if shared is not None else {}

        def __serve_build_asgi_app__(self) -> Any:
            from tanglerag.service.app import create_app

            return create_app(self._make_runtime(**self._parts), self._keys, runs_dir=self._runs_dir)

    return ServiceReplica


def scaling(config: ServiceConfig) -> dict[str, Any]:
    """The deployment's replica options: a fixed count, or autoscaling between ``replicas`` and ``max_replicas`` by
    the requests in progress per replica."""
    if config.max_replicas is None or config.max_replicas == config.replicas:
        return {"num_replicas": config.replicas}
    return {"autoscaling_config": {"min_replicas": config.replicas, "max_replicas": config.max_replicas,
                                   "target_ongoing_requests": config.target_ongoing_requests}}


def application(make_runtime: Callable[..., Runtime], config: ServiceConfig, keys: ApiKeys,
                runs_dir: Path | None = None, shared: Shared | None = None) -> Any:
    """The Serve application of the service: its deployment bound to the recipe of a replica's runtime and the API
    keys the driver loaded (checked there against the host; a replica on another node reading its own environment
    or key file could come up with none, every caller then admin). A replica
    is handed at most what one process admits before its own 429s (``max_running + max_waiting``; with
    ``max_running`` unset, what the model backend serves at once is known only once it is built in the replica, so
    ``UNSET_RUNNING``): more wait in Serve's proxy for a replica with room."""
    _, serve = _ray()
    limit = (config.max_running or UNSET_RUNNING) + config.max_waiting
    deployment = serve.deployment(replica_class(), name=APP_NAME, max_ongoing_requests=limit,
                                  health_check_period_s=2, graceful_shutdown_timeout_s=config.answer_timeout_s,
                                  **scaling(config))
    if shared is None or not (config.model_replicas or config.embedding_replicas):
        return deployment.bind(make_runtime, keys, runs_dir)
    model = model_class().options(num_replicas=config.model_replicas).bind(shared.make_backend) \
        if config.model_replicas else None
    embedding = embedding_class(config).options(num_replicas=config.embedding_replicas).bind(shared.make_embedder) \
        if config.embedding_replicas else None
    return deployment.bind(make_runtime, keys, runs_dir, shared, model, embedding, config)


def start(make_runtime: Callable[..., Runtime], config: ServiceConfig, keys: ApiKeys | None = None,
          runs_dir: Path | None = None, blocking: bool = False, shared: Shared | None = None) -> None:
    """Join (``service.ray_address``) or start Ray, start Serve's proxy on ``service.host:port`` and run the
    application (with ``shared``'s model and embedder deployments when the config asks for them); ``blocking``: until
    interrupted, then shut Serve down (its replicas finish their requests first)."""
    ray, serve = _ray()
    if not ray.is_initialized():
        ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
    serve.start(http_options={"host": config.host, "port": config.port})
    try:
        serve.run(application(make_runtime, config, keys if keys is not None else ApiKeys({}), runs_dir, shared),
                  name=APP_NAME, route_prefix="/", blocking=blocking)
    except KeyboardInterrupt:
        serve.shutdown()
