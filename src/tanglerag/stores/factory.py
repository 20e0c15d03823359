"""The store the settings name (``store.backend``), opened on one collection, with its dimension checked against the
embedder's: a collection of other vectors would rank by meaningless scores, so it is refused in one line."""

from __future__ import annotations

from pathlib import Path

from tanglerag.embeddings import TextEmbedder, embedder_identity, settings_making
from tanglerag.settings import Settings
from tanglerag.stores.base import StoreError, VectorStore
from tanglerag.stores.registry import STORES


def open_store(settings: Settings, embedder: TextEmbedder, *, index_dir: Path | None = None) -> VectorStore:
    """The configured store (``settings.store``), its collection's dimension checked against ``embedder``'s;
    ``index_dir`` is the embedded backend's folder."""
    store = build_store(settings, embedder, index_dir=index_dir)
    check_dimension(store, embedder, settings.store.collection)
    return store


def build_store(settings: Settings, embedder: TextEmbedder, *, index_dir: Path | None = None) -> VectorStore:
    """The configured store, not yet reached (construction connects to nothing): the class ``store.backend`` names
    in ``STORES``, built from the settings."""
    store: VectorStore = STORES.get(settings.store.backend).from_settings(settings, embedder, index_dir)
    return store


def check_dimension(store: VectorStore, embedder: TextEmbedder, collection: str) -> None:
    """Refuse a collection whose vectors were made by another embedder than the configured one, where it says so, or
    are not of its size (a collection not written yet passes): its scores would be meaningless."""
    written, configured = store.written_by(), embedder_identity(embedder)
    if written is not None and written != configured:
        raise StoreError(f"{store.name} collection {collection!r} was embedded with {written!r}, but the configured "
                         f"embedder is {configured!r}: {settings_making(written)}")
    held = store.dimension()
    if held is not None and held != embedder.dimension:
        raise StoreError(f"{store.name} collection {collection!r} holds vectors of {held} dimensions but the embedder "
                         f"{embedder_identity(embedder)!r} makes {embedder.dimension}: set embedding.model to the "
                         "model the collection was embedded with")
