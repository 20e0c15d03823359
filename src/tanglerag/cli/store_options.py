"""The options that point a command at a vector store instead of an index folder: shortcuts for ``--set store.*``
(``--store qdrant --store-url URL --collection NAME`` is ``--set store.backend=qdrant --set store.url=URL ...``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tanglerag.errors import InputError
from tanglerag.settings import Settings
from tanglerag.stores.registry import capabilities

StoreOpt = Annotated[str | None, typer.Option("--store", help=(
    "where passages live: embedded (the --index folder, the default), qdrant, lancedb, chroma, pgvector or a plug-in's name (store.backend)"))]
StoreUrlOpt = Annotated[str | None, typer.Option("--store-url", help=(
    "the store server's address, e.g. http://localhost:6333 (store.url)"))]
StorePathOpt = Annotated[Path | None, typer.Option("--store-path", help=(
    "the folder of the store's local (embedded) mode (store.path)"))]
CollectionOpt = Annotated[str | None, typer.Option("--collection", help="the store's collection (store.collection)")]


def store_flags(store: str | None, url: str | None, path: Path | None, collection: str | None) -> dict[str, Any]:
    """The options as ``load_settings`` flags (those not given are left to the settings)."""
    return {"store__backend": store, "store__url": url, "store__path": path, "store__collection": collection}


def check_source(settings: Settings, index_dir: Path | None, *, needed: bool = True) -> None:
    """One place passages come from: an index folder or a store, not both; ``needed``: one of them. Every command
    that calls it reads (ask, search, eval, serve): a store folder that does not exist is a typo, not a new store."""
    backend, folder = settings.store.backend, capabilities(settings).index_folder
    if not folder and index_dir is not None:
        raise InputError(f"--index reads the embedded index, store.backend={backend} a {backend} collection: "
                         "give one of them")
    path = settings.store.path
    if not folder and path is not None and not path.exists():  # reading must not leave a new empty store behind
        raise InputError(f"store.path {path} does not exist: {backend}'s local store is read from an existing "
                         "folder (tanglerag index --store ... --store-path writes one)")
    if folder and index_dir is None and needed:
        raise InputError("give an index folder (--index DIR) or a store (--store qdrant --store-url URL "
                         "--collection NAME)")
