"""The store the settings name (``store.backend``), opened on one collection, with its dimension checked against the
embedder's: a collection of other vectors would rank by meaningless scores, so it is refused in one line."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.settings import Settings
from tanglerag.stores.base import StoreError, VectorStore
from tanglerag.where import authority_tiers

MODULES = {"qdrant": "QdrantStore", "lancedb": "LanceDBStore", "chroma": "ChromaStore"}
"""The stores beside the embedded index: ``tanglerag.stores.<name>`` holds the class, built as
``Class(collection, url=, path=, fields=, timeout_s=, tiers=)`` (and ``api_key=`` when ``store.api_key_env`` is set)."""


def open_store(settings: Settings, embedder: TextEmbedder, *, index_dir: Path | None = None) -> VectorStore:
    """The configured store (``settings.store``), its collection's dimension checked against ``embedder``'s;
    ``index_dir`` is the embedded backend's folder."""
    store = build_store(settings, embedder, index_dir=index_dir)
    check_dimension(store, embedder, settings.store.collection)
    return store


def build_store(settings: Settings, embedder: TextEmbedder, *, index_dir: Path | None = None) -> VectorStore:
    """The configured store, not yet reached (construction connects to nothing)."""
    config = settings.store
    if config.backend == "embedded":
        from tanglerag.stores.embedded import EmbeddedStore

        if index_dir is None:
            raise StoreError("store.backend=embedded reads the index folder given with --index")
        return EmbeddedStore(index_dir, embedder, settings.index)
    if config.url is None and config.path is None:
        raise StoreError(f"store.backend={config.backend} needs store.url (a server: --store-url) or store.path (a "
                         "local folder: --store-path)")
    kind = getattr(importlib.import_module(f"tanglerag.stores.{config.backend}"), MODULES[config.backend])
    options: dict[str, Any] = {"url": config.url, "path": config.path, "fields": config.fields,
                               "timeout_s": config.timeout_s, "tiers": authority_tiers(settings)}
    if config.api_key_env:
        options["api_key"] = os.environ.get(config.api_key_env)
    return kind(config.collection, **options)  # type: ignore[no-any-return]


def check_dimension(store: VectorStore, embedder: TextEmbedder, collection: str) -> None:
    """Refuse a collection whose vectors are not of the embedder's size (a collection not written yet passes)."""
    held = store.dimension()
    if held is not None and held != embedder.dimension:
        raise StoreError(f"{store.name} collection {collection!r} holds vectors of {held} dimensions but the embedder "
                         f"{embedder_identity(embedder)!r} makes {embedder.dimension}: set embedding.model to the "
                         "model the collection was embedded with")
