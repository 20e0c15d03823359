"""The backends the contract suite runs against: ``BACKENDS`` maps a store's ``--store`` name to how a test opens
one on a temporary folder and, where the backend can, writes a collection with the store's own client (as another
tool would). A new backend adds its ``Backend`` in a module of its own beside this one, ``backend_<name>.py``
(``BACKENDS["name"] = Backend(...)``), which is imported here, and passes ``test_contract.py``; one whose client
package is not installed is skipped.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import VectorStore
from tanglerag.testing import HashEmbedder

DIMENSION = 16


@dataclass(frozen=True)
class ForeignPoint:
    """One record of a collection written without tanglerag: the store's own key, its vector, its payload."""

    key: int
    vector: np.ndarray
    payload: dict[str, Any]


Opener = Callable[[Path, str, FieldMapping | None], VectorStore]
"""(a temporary folder of the test, the collection, the field mapping or None for tanglerag's) -> an open store."""
ForeignWriter = Callable[[Path, str, list[ForeignPoint]], None]
"""Write these points into the collection with the store's own client (closed again before it returns)."""


@dataclass(frozen=True)
class Backend:
    """How the suite reaches one store. ``needs``: the module the backend imports (skipped when it is missing);
    ``refuses``: ``--where`` texts of the suite this backend may refuse (``unsupported``) besides those every
    backend may refuse (``test_contract.MAY_REFUSE``), each then checked to raise StoreError on search."""

    open: Opener
    needs: str | None = None
    foreign: ForeignWriter | None = None
    refuses: frozenset[str] = field(default_factory=frozenset)


def _embedded(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.embedded import EmbeddedStore

    return EmbeddedStore(folder / collection, HashEmbedder(dim=DIMENSION))


def _qdrant(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.qdrant import QdrantStore

    return QdrantStore(collection, path=folder / "qdrant", fields=fields)


def _qdrant_foreign(folder: Path, collection: str, points: list[ForeignPoint]) -> None:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder / "qdrant"))
    try:
        client.create_collection(collection, vectors_config=models.VectorParams(size=DIMENSION,
                                                                                distance=models.Distance.COSINE))
        client.upsert(collection, [models.PointStruct(id=p.key, vector=p.vector.tolist(), payload=p.payload)
                                   for p in points], wait=True)
    finally:
        client.close()


BACKENDS: dict[str, Backend] = {
    "embedded": Backend(_embedded),
    "qdrant": Backend(_qdrant, needs="qdrant_client", foreign=_qdrant_foreign),
}


def _load_backend_modules() -> None:
    """Import every ``backend_*.py`` beside this module: each adds its backend to ``BACKENDS``."""
    for module in sorted(Path(__file__).parent.glob("backend_*.py")):
        importlib.import_module(f"{__package__}.{module.stem}")


_load_backend_modules()
