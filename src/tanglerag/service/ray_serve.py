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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tanglerag.config import ServiceConfig
from tanglerag.errors import ConfigError
from tanglerag.runtime import Runtime
from tanglerag.service.auth import ApiKeys

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


def replica_class() -> type:
    """The deployment's class: each replica builds its runtime and the service app after it starts (Serve's
    ``__serve_build_asgi_app__``), so nothing heavy crosses from the driver but the recipe."""
    _, serve = _ray()

    @serve.ingress()
    class ServiceReplica:
        def __init__(self, make_runtime: Callable[[], Runtime], keys: ApiKeys, runs_dir: Path | None) -> None:
            self._make_runtime, self._keys, self._runs_dir = make_runtime, keys, runs_dir

        def __serve_build_asgi_app__(self) -> Any:
            from tanglerag.service.app import create_app

            return create_app(self._make_runtime(), self._keys, runs_dir=self._runs_dir)

    return ServiceReplica


def scaling(config: ServiceConfig) -> dict[str, Any]:
    """The deployment's replica options: a fixed count, or autoscaling between ``replicas`` and ``max_replicas`` by
    the requests in progress per replica."""
    if config.max_replicas is None or config.max_replicas == config.replicas:
        return {"num_replicas": config.replicas}
    return {"autoscaling_config": {"min_replicas": config.replicas, "max_replicas": config.max_replicas,
                                   "target_ongoing_requests": config.target_ongoing_requests}}


def application(make_runtime: Callable[[], Runtime], config: ServiceConfig, keys: ApiKeys,
                runs_dir: Path | None = None) -> Any:
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
    return deployment.bind(make_runtime, keys, runs_dir)


def start(make_runtime: Callable[[], Runtime], config: ServiceConfig, keys: ApiKeys | None = None,
          runs_dir: Path | None = None, blocking: bool = False) -> None:
    """Join (``service.ray_address``) or start Ray, start Serve's proxy on ``service.host:port`` and run the
    application; ``blocking``: until interrupted, then shut Serve down (its replicas finish their requests first)."""
    ray, serve = _ray()
    if not ray.is_initialized():
        ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
    serve.start(http_options={"host": config.host, "port": config.port})
    try:
        serve.run(application(make_runtime, config, keys if keys is not None else ApiKeys({}), runs_dir),
                  name=APP_NAME, route_prefix="/", blocking=blocking)
    except KeyboardInterrupt:
        serve.shutdown()
