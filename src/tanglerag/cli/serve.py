"""``tanglerag serve``: the HTTP API and the web inspector."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Annotated

import typer

from tanglerag.cli.common import ConfigOpt, SetOpt, VerboseOpt, console, load_settings
from tanglerag.cli.store_options import CollectionOpt, StoreOpt, StorePathOpt, StoreUrlOpt, check_source, store_flags
from tanglerag.errors import ConfigError, IndexStoreError, InputError
from tanglerag.runtime import Runtime

app = typer.Typer()


@app.command()
def serve(
    index_dir: Annotated[Path | None, typer.Option("--index", "-i", help=(
        "index folder to serve (created by the first upload)"))] = None,
    host: Annotated[str | None, typer.Option("--host", help="bind address (default service.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option("--port", help="port (default service.port, 8000)")] = None,
    runs: Annotated[Path | None, typer.Option("--runs", help="a folder of eval outputs (eval --out) to browse at "
                                                         "/runs: scores per question and method, traces side by "
                                                         "side")] = None,
    engine: Annotated[str | None, typer.Option("--engine", help=(
        "local: this process serves; ray: Ray Serve replicas behind Serve's proxy (service.engine)"))] = None,
    replicas: Annotated[int | None, typer.Option("--replicas", help=(
        "with --engine ray: replicas to start (service.replicas; service.max_replicas scales above it)"))] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help=(
        "with --engine ray: a Ray cluster to join (default: start a local instance)"))] = None,
    store: StoreOpt = None, store_url: StoreUrlOpt = None, store_path: StorePathOpt = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Serve the HTTP API and the web inspector; API keys from TANGLERAG_API_KEYS or service.api_keys_file."""
    import uvicorn

    from tanglerag.service.app import create_app
    from tanglerag.service.auth import ApiKeys, is_loopback

    settings = load_settings(config, set_, verbose, service__host=host, service__port=port, service__engine=engine,
                             service__replicas=replicas, service__ray_address=ray_address,
                             **store_flags(store, store_url, store_path, collection))
    check_source(settings, index_dir)
    logging.getLogger("tanglerag").setLevel(logging.INFO)
    keys = ApiKeys.load(settings.service.api_keys_file)
    cfg = settings.service
    if not keys.enabled and not is_loopback(cfg.host):
        raise ConfigError(f"refusing to serve on {cfg.host} without API keys: set TANGLERAG_API_KEYS or "
                          "service.api_keys_file, or bind to 127.0.0.1")
    if index_dir is not None and index_dir.exists() and not (index_dir / "manifest.json").exists():
        raise IndexStoreError(f"{index_dir} exists and is not a tanglerag index")
    if runs is not None and not runs.is_dir():
        raise InputError(f"--runs {runs} is not a folder; give the folder eval --out wrote (or one above several)")
    if not keys.enabled:
        console.print(f"no API keys configured: serving on {cfg.host} (loopback) only, every caller is admin")
    console.print(f"tanglerag inspector: http://{cfg.host}:{cfg.port}/")
    if runs is not None:
        console.print(f"eval runs under {runs}: http://{cfg.host}:{cfg.port}/runs")
    if cfg.engine == "ray":
        from tanglerag.service import ray_serve

        bounds = f"{cfg.replicas} to {cfg.max_replicas}" if cfg.max_replicas else f"{cfg.replicas}"
        shared = [f"{n} of {what}" for n, what in ((cfg.model_replicas, "the model"),
                                                    (cfg.embedding_replicas, "the query embedder")) if n]
        console.print(f"Ray Serve: {bounds} replicas of the service" + (f", sharing {' and '.join(shared)}"
                                                                       if shared else ""))
        ray_serve.start(functools.partial(Runtime, settings, index_dir=index_dir), cfg, keys, runs, blocking=True,
                        shared=ray_serve.Shared.of(settings))
        return
    # info: one line per request (method, path, status), as a person watching a server expects
    uvicorn.run(create_app(Runtime(settings, index_dir=index_dir), keys, runs_dir=runs), host=cfg.host,
                port=cfg.port, log_level="info")
