"""The stores ``store.backend`` may name: one line each, ``name: "module:Class"`` and the extra its client comes
from; another distribution adds one through the ``tanglerag.stores`` entry-point group.

A store class fulfils ``stores.base.VectorStore`` and builds itself from the settings (``from_settings``), so the
factory never names a backend: adding one is its module, a line here and ``tests/stores/test_contract.py``.
"""

from __future__ import annotations

from typing import Any

from tanglerag.registry import Registry

STORES: Registry[Any] = Registry("store", group="tanglerag.stores")
"""Store classes by ``store.backend`` name (``Any``: a class fulfilling a Protocol is not a Protocol's subclass)."""
STORES.register_lazy("embedded", "tanglerag.stores.embedded:EmbeddedStore")
STORES.register_lazy("qdrant", "tanglerag.stores.qdrant:QdrantStore", extra="qdrant")
STORES.register_lazy("lancedb", "tanglerag.stores.lancedb:LanceDBStore", extra="lancedb")
STORES.register_lazy("chroma", "tanglerag.stores.chroma:ChromaStore", extra="chroma")
