"""LanceDB in the contract suite: a database folder under the test's temporary folder, and a table another tool
wrote with LanceDB's own client (``lancedb.connect`` + ``create_table``; LanceDB has no point key of its own, so
``ForeignPoint.key`` is not written)."""

from __future__ import annotations

from pathlib import Path

from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import VectorStore
from tests.stores.backends import BACKENDS, Backend, ForeignPoint


def _lancedb(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.lancedb import LanceDBStore

    return LanceDBStore(collection, path=folder / "lancedb", fields=fields)


def _lancedb_foreign(folder: Path, collection: str, points: list[ForeignPoint]) -> None:
    import lancedb

    rows = [{**point.payload, "vector": point.vector.astype("float32").tolist()} for point in points]
    lancedb.connect(folder / "lancedb").create_table(collection, data=rows)


BACKENDS["lancedb"] = Backend(_lancedb, needs="lancedb", foreign=_lancedb_foreign)
