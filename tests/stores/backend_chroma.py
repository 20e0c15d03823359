"""Chroma in the contract suite, through both of its clients: ``chroma``, the embedded persistent client on a folder
under the test's temporary folder, and ``chroma-server``, the HTTP client against a real ``chroma run`` process
(``chroma_server.shared_server``: one a test process, each test's collections named after its folder). A foreign
collection is written with Chroma's own client, each point's payload as the record's metadata and no document."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import VectorStore
from tests.stores.backends import BACKENDS, Backend, ForeignPoint
from tests.stores.chroma_server import shared_server


def _embedded(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.chroma import ChromaStore

    return ChromaStore(collection, path=folder / "chroma", fields=fields)


def _served(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.chroma import ChromaStore

    return ChromaStore(_own_name(folder, collection), url=shared_server().url, fields=fields)


def _own_name(folder: Path, collection: str) -> str:
    """The collection's name on the shared server: the test's own (its folder's) beside every other test's."""
    return f"{collection}-{hashlib.sha1(str(folder).encode()).hexdigest()[:10]}"


def _embedded_foreign(folder: Path, collection: str, points: list[ForeignPoint]) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False))
    try:
        _write_foreign(client, collection, points)
    finally:
        client.close()


def _served_foreign(folder: Path, collection: str, points: list[ForeignPoint]) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.HttpClient(host=shared_server().url, settings=Settings(anonymized_telemetry=False))
    try:
        _write_foreign(client, _own_name(folder, collection), points)
    finally:
        client.close()


def _write_foreign(client: Any, collection: str, points: list[ForeignPoint]) -> None:
    held = client.create_collection(collection, metadata={"hnsw:space": "cosine"}, embedding_function=None)
    held.add(ids=[str(p.key) for p in points], embeddings=[p.vector.astype("float32") for p in points],
             metadatas=[p.payload for p in points])


BACKENDS["chroma"] = Backend(_embedded, needs="chromadb", foreign=_embedded_foreign)
BACKENDS["chroma-server"] = Backend(_served, needs="chromadb", foreign=_served_foreign)
