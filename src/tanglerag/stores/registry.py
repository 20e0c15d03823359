"""The stores ``store.backend`` may name: one line each, ``name: "module:Class"`` and the extra its client comes
from; another distribution adds one through the ``tanglerag.stores`` entry-point group.

A store class fulfils ``stores.base.VectorStore`` and builds itself from the settings (``from_settings``), so the
factory never names a backend: adding one is its module, a line here and ``tests/stores/test_contract.py``.
"""

from __future__ import annotations

from typing import Any

from tanglerag.errors import InputError
from tanglerag.registry import Registry
from tanglerag.settings import Settings
from tanglerag.stores.base import DESCRIBED, Capabilities

STORES: Registry[Any] = Registry("store", group="tanglerag.stores")
"""Store classes by ``store.backend`` name (``Any``: a class fulfilling a Protocol is not a Protocol's subclass)."""
STORES.register_lazy("embedded", "tanglerag.stores.embedded:EmbeddedStore")
STORES.register_lazy("qdrant", "tanglerag.stores.qdrant:QdrantStore", extra="qdrant")
STORES.register_lazy("lancedb", "tanglerag.stores.lancedb:LanceDBStore", extra="lancedb")
STORES.register_lazy("chroma", "tanglerag.stores.chroma:ChromaStore", extra="chroma")
STORES.register_lazy("pgvector", "tanglerag.stores.pgvector:PgVectorStore", extra="pgvector")


def capabilities(settings: Settings) -> Capabilities:
    """What the store ``store.backend`` names offers (its class's, nothing connected)."""
    found: Capabilities = STORES.get(settings.store.backend).capabilities
    return found


def require(settings: Settings, capability: str, what: str) -> None:
    """The one place a missing capability is refused: InputError naming ``what`` needed it, the store, and what the
    store offers."""
    offered = capabilities(settings)
    if not getattr(offered, capability):
        raise InputError(f"{what} needs {DESCRIBED[capability]}: store.backend={settings.store.backend} offers "
                         f"{', '.join(offered.offered())}")
