"""A PostgreSQL table with pgvector as a store (``psycopg`` and ``pgvector``, an optional extra:
``pip install 'tanglerag[pgvector]'``): the store most teams already run, reached with ``--store-url
postgresql://user@host/db``.

A collection is a table of the connected database's schema: ``id`` (the passage id, its primary key), ``doc`` (a
JSONB payload: text, title, the metadata as given, the filter fields of ``base.filter_fields`` and the ``meta.KEY``
fields of ``pushdown.meta_fields``, as Qdrant's payload holds them), ``embedding`` (``vector(d)``, an HNSW index for
cosine) and ``fts`` (a ``tsvector`` of title and text, with a GIN index, for full-text search). A row in
``tanglerag_collections`` marks a table tanglerag created, with the embedder it was made for: a table without that
row was written by another tool (LangChain's, a client of its own), is read through ``store.fields`` (each column a
field, the vector column left out) and is never written to.

A ``--where`` becomes SQL whose every value is a bound parameter: a number range is a JSON path test
(``jsonb_path_exists`` with its bounds passed as variables, so a list field passes when one item does), a text test
is JSONB's ``?|`` on the case-folded values, "has the field" is ``?``. A filtered search asks the HNSW index for an
iterative scan (pgvector 0.8), so a filter that passes few rows still gets its ``k`` closest. Each ``upsert`` is one
transaction: applied whole or not at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.errors import InputError
from tanglerag.redaction import without_credentials
from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import (
    Capabilities,
    ServerStore,
    StoredHit,
    StoreError,
    check_write,
    filter_fields,
    not_ours,
    read_record,
)
from tanglerag.stores.pushdown import FilterClause, OneOf, Refused, Test, clauses, meta_fields
from tanglerag.types import Passage
from tanglerag.where import Where

if TYPE_CHECKING:
    import psycopg

MARKS = "tanglerag_collections"
"""The table that lists the collections tanglerag created, each with its embedder and dimension."""
OWN_FIELDS = ("id", "text", "title")
EF_SEARCH = 400
"""The HNSW candidates a search keeps (pgvector's ``hnsw.ef_search``). Over 167,936 passages of the stores benchmark
(benchmarks/stores.py, docs/benchmarks.md) pgvector's default 40 found 0.914 of the exact top 10 at a p50 of 4.9 ms,
100 found 0.930 at 6.2 ms, 400 finds 0.980 (filtered 0.970) at 10.4 ms, its filtered p50 under twice the plain."""
SCAN_PAGE = 512
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
"""A collection is a table: a name PostgreSQL takes unquoted and unchanged (lower case is kept as typed)."""


class PgVectorStore(ServerStore):
    """One table of a PostgreSQL database with the pgvector extension (``url``)."""

    name: ClassVar[str] = "pgvector"
    capabilities: ClassVar[Capabilities] = Capabilities(sparse=True)

    def __init__(self, collection: str, *, url: str | None = None, path: Path | None = None,
                 fields: FieldMapping | None = None, timeout_s: float = 10.0, api_key: str | None = None,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, embedder: str | None = None) -> None:
        if url is None:
            raise StoreError("store.backend=pgvector needs store.url (--store-url postgresql://user@host/db)")
        if not _NAME.match(collection):
            raise StoreError(f"pgvector: collection {collection!r} is no table name: letters, digits and '_', "
                             "starting with a letter or '_', at most 63")
        self.collection, self.url, self.embedder = collection, url, embedder
        self.fields = fields or FieldMapping()
        self.timeout_s, self.tiers = timeout_s, dict(tiers)
        self._conn: psycopg.Connection[Any] | None = None
        self._known: tuple[str | None, int] | None = None  # the mark, once read: a table's mark never changes
        self.where = f"pgvector at {without_credentials(url)}"

    # -- connection ---------------------------------------------------------------------
    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            try:
                import psycopg
                from pgvector.psycopg import register_vector
            except ImportError:
                raise StoreError("store.backend=pgvector needs psycopg and pgvector: pip install "
                                 "'tanglerag[pgvector]'") from None
            with self._reaching("connect"):
                conn = psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, int(self.timeout_s)))
                try:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    register_vector(conn)
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
        return self._conn

    @contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """A call to PostgreSQL; its failures (down, refused, a missing extension, a timeout) as one line naming the
        store, never a URL's credentials."""
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            why = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            raise StoreError(without_credentials(f"{self.where}, collection {self.collection!r}: {what} failed: "
                                                 f"{why}")) from None

    def _table(self) -> Any:
        from psycopg import sql

        return sql.Identifier(self.collection)

    def _exists(self) -> bool:
        if self._known is not None:
            return True
        with self._reaching("check the collection"):
            row = self.conn.execute("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
                                    "AND table_name = %s", (self.collection,)).fetchone()
        return row is not None

    def _mark(self) -> tuple[str | None, int] | None:
        """(embedder, dimension) of a collection tanglerag created, else None; read once found (a search would
        otherwise ask for it twice a question)."""
        if self._known is not None:
            return self._known
        with self._reaching("read the collection's mark"):
            if self.conn.execute("SELECT to_regclass(%s)", (MARKS,)).fetchone() == (None,):
                return None  # no collection of tanglerag's in this schema yet
            row = self.conn.execute(f"SELECT embedder, dimension FROM {MARKS} WHERE name = %s",
                                    (self.collection,)).fetchone()
        if row is not None:
            self._known = (row[0], int(row[1]))
        return self._known

    # -- the contract ---------------------------------------------------------------------
    def dimension(self) -> int | None:
        if not self._exists():
            return None
        mark = self._mark()
        return mark[1] if mark is not None else self._vector_column()[1]

    def written_by(self) -> str | None:
        mark = self._mark() if self._exists() else None
        return mark[0] if mark is not None else None

    def count(self) -> int:
        from psycopg import sql

        if not self._exists():
            return 0
        with self._reaching("count"):
            row = self.conn.execute(sql.SQL("SELECT count(*) FROM {}").format(self._table())).fetchone()
        return int(row[0]) if row is not None else 0

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        self.replace(passages, vectors, [])

    def replace(self, passages: Sequence[Passage], vectors: np.ndarray, stale: Sequence[str]) -> None:
        """Upsert ``passages`` and delete the ``stale`` ids in one transaction: a reader sees the documents as they
        were or as they are now, never a mix, whatever happens to the writer in between."""
        from psycopg import sql
        from psycopg.types.json import Jsonb

        check_write(self.where, self.fields, passages, vectors)
        if not passages:
            self.delete(stale)
            return
        self._create(int(vectors.shape[1]))
        rows = [(p.id, Jsonb(self._payload(p)), np.asarray(v, dtype="float32")) for p, v in zip(passages, vectors,
                                                                                                strict=True)]
        statement = sql.SQL("INSERT INTO {} (id, doc, embedding) VALUES (%s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                            "doc = EXCLUDED.doc, embedding = EXCLUDED.embedding").format(self._table())
        with self._reaching(f"write {len(rows)} passages"), self.conn.transaction(), self.conn.cursor() as cursor:
            cursor.executemany(statement, rows)
            if stale:
                cursor.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(self._table()), (list(stale),))

    def delete(self, ids: Sequence[str]) -> None:
        from psycopg import sql

        if not ids or not self._exists():
            return
        with self._reaching("delete"):
            self.conn.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(self._table()), (list(ids),))

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        from psycopg import sql

        if not self._exists() or self._mark() is None:
            return
        after = ""
        while True:  # keyset pages: a page a query, in id order
            with self._reaching("read the passages' metadata"):
                rows = self.conn.execute(sql.SQL("SELECT id, doc - 'text' - 'title' FROM {} WHERE id > %s ORDER BY id "
                                                 "LIMIT %s").format(self._table()), (after, SCAN_PAGE)).fetchall()
            for held, doc in rows:
                yield held, {k: v for k, v in doc.items() if k not in OWN_FIELDS and not k.startswith("_tr_")}
            if len(rows) < SCAN_PAGE:
                return
            after = rows[-1][0]

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        refused = self.unsupported(where) if where is not None else None
        if refused is not None:
            raise StoreError(refused)
        if not self._exists():
            raise StoreError(f"{self.where}: collection {self.collection!r} does not exist: index into it first")
        mark = self._mark()
        size = mark[1] if mark is not None else self._vector_column()[1]
        query = np.asarray(vector, dtype="float32").reshape(-1)
        if query.shape[0] != size:
            raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {size} dimensions, the "
                             f"query has {query.shape[0]}")
        return self._ours(query, k, where) if mark is not None else self._theirs(query, k)

    def unsupported(self, where: Where) -> str | None:
        if self._exists() and self._mark() is None:
            return (f"{self.where}: collection {self.collection!r} was not written by tanglerag and holds no filter "
                    f"fields, so the filter {where.text.strip()!r} cannot be pushed down: ask without it")
        try:
            found = clauses(where)
        except Refused as exc:
            return f"{self.where}: {exc}"
        for clause in found:
            if clause.text_field is not None and self._holds(clause.text_field):
                return (f"{self.where}: {clause.condition!r} would order the text values of that key as text, which "
                        "a number range cannot")
        return None

    def _holds(self, field: str) -> bool:
        """Whether any row holds a value in the payload field ``field``."""
        from psycopg import sql

        if not self._exists():
            return False
        with self._reaching("read the collection"):
            row = self.conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE doc ? %s)").format(self._table()),
                                    (field,)).fetchone()
        return bool(row and row[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def text_search(self, query: str, k: int, where: Where | None = None) -> list[StoredHit]:
        """PostgreSQL's full-text ranking (``ts_rank_cd`` over the ``fts`` column) for any of the query's words (its
        lexemes joined by OR, as BM25 scores any word), under the pushed-down filter."""
        from psycopg import sql

        refused = self.unsupported(where) if where is not None else None
        if refused is not None:
            raise StoreError(refused)
        if self._mark() is None:
            raise StoreError(f"{self.where}: collection {self.collection!r} has no full-text column (tanglerag did "
                             "not write it): search it with retrieval.mode=dense")
        condition, values = sql_filter(clauses(where)) if where is not None else (sql.SQL("TRUE"), [])
        statement = sql.SQL(
            "WITH q AS (SELECT to_tsquery('english', string_agg(quote_literal(lexeme), ' | ')) AS q FROM "
            "unnest(to_tsvector('english', %s))) SELECT id, doc, ts_rank_cd(fts, q.q) AS rank FROM {}, q WHERE "
            "fts @@ q.q AND {} ORDER BY rank DESC, id LIMIT %s").format(self._table(), condition)
        with self._reaching("search the text"):
            rows = self.conn.execute(statement, [query, *values, k]).fetchall()
        return [StoredHit(passage=self._passage(pid, {**doc, "id": pid}), score=float(rank)) for pid, doc, rank in rows]

    # -- searching ------------------------------------------------------------------------
    def _ours(self, query: np.ndarray, k: int, where: Where | None) -> list[StoredHit]:
        from psycopg import sql

        condition, values = sql_filter(clauses(where)) if where is not None else (sql.SQL("TRUE"), [])
        statement = sql.SQL("SELECT id, doc, 1 - (embedding <=> %s) FROM {} WHERE {} ORDER BY embedding <=> %s "
                            "LIMIT %s").format(self._table(), condition)
        with self._reaching("search"), self.conn.transaction():
            # a filtered HNSW scan goes on until k rows pass (pgvector 0.8), in the exact order of distance
            self.conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
            rows = self.conn.execute(statement, [query, *values, query, k]).fetchall()
        return [StoredHit(passage=self._passage(pid, {**doc, "id": pid}), score=float(score))
                for pid, doc, score in rows]

    def _theirs(self, query: np.ndarray, k: int) -> list[StoredHit]:
        """A foreign table's rows as records of their columns (the vector column left out), read through
        ``store.fields``; its primary key, when it has one, is the fallback id."""
        from psycopg import sql

        column, _ = self._vector_column()
        keys = self._primary_key()
        statement = sql.SQL("SELECT to_jsonb(t) - %s, 1 - ({} <=> %s) FROM {} AS t ORDER BY {} <=> %s LIMIT %s").format(
            sql.Identifier(column), self._table(), sql.Identifier(column))
        with self._reaching("search"):
            rows = self.conn.execute(statement, (column, query, query, k)).fetchall()
        return [StoredHit(passage=read_record(record, self.fields, what=f"{self.where}: row of table "
                                              f"{self.collection!r}", fallback_id=_key(record, keys),
                                              skip=frozenset(keys)), score=float(score)) for record, score in rows]

    def _vector_column(self) -> tuple[str, int]:
        """The table's one vector column and its dimension (a foreign table names its own)."""
        with self._reaching("read the table's columns"):
            rows = self.conn.execute("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE "
                                     "attrelid = to_regclass(quote_ident(%s)) AND attnum > 0 AND NOT attisdropped",
                                     (self.collection,)).fetchall()
        found = [(name, int(m.group(1))) for name, kind in rows if (m := re.fullmatch(r"vector\((\d+)\)", kind))]
        if len(found) != 1:
            raise StoreError(f"{self.where}: table {self.collection!r} has {len(found)} vector columns of a fixed "
                             "dimension; tanglerag reads a table of one")
        return found[0]

    def _primary_key(self) -> list[str]:
        with self._reaching("read the table's key"):
            rows = self.conn.execute("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                                     "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass(quote_ident(%s)) "
                                     "AND i.indisprimary", (self.collection,)).fetchall()
        return [row[0] for row in rows]

    # -- collection ---------------------------------------------------------------------
    def _create(self, size: int) -> None:
        from psycopg import sql

        if self._exists():
            mark = self._mark()
            if mark is None:
                if self.count() > 0:
                    raise StoreError(not_ours(self.where, self.collection))
                raise StoreError(f"{self.where}: table {self.collection!r} exists and is not tanglerag's: name "
                                 "another --collection")
            if mark[1] != size:
                raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {mark[1]} "
                                 f"dimensions, these have {size}: use the collection's embedder, or another collection")
            return
        table = self._table()
        with self._reaching("create the collection"), self.conn.transaction():
            self.conn.execute(sql.SQL(
                "CREATE TABLE {} (id text PRIMARY KEY, doc jsonb NOT NULL, embedding vector({}) NOT NULL, fts tsvector "
                "GENERATED ALWAYS AS (to_tsvector('english', coalesce(doc->>'title', '') || ' ' || "
                "coalesce(doc->>'text', ''))) STORED)").format(table, sql.Literal(size)))
            self.conn.execute(sql.SQL("CREATE INDEX ON {} USING hnsw (embedding vector_cosine_ops)").format(table))
            self.conn.execute(sql.SQL("CREATE INDEX ON {} USING gin (fts)").format(table))
            self.conn.execute(f"CREATE TABLE IF NOT EXISTS {MARKS} (name text PRIMARY KEY, embedder text, "
                              "dimension integer NOT NULL)")
            self.conn.execute(f"INSERT INTO {MARKS} (name, embedder, dimension) VALUES (%s, %s, %s)",
                              (self.collection, self.embedder, size))

    # -- payloads -------------------------------------------------------------------------
    def _payload(self, passage: Passage) -> dict[str, Any]:
        metadata = passage.model_dump(mode="json")["metadata"]
        clash = sorted(key for key in metadata if key in OWN_FIELDS or key.startswith("_tr_"))
        if clash:
            raise StoreError(f"{self.where}: passage {passage.id!r} has metadata {clash[0]!r}, a name the store keeps "
                             "for itself")
        try:
            fields = filter_fields(metadata, self.tiers)
        except InputError as exc:
            raise StoreError(f"{self.where}: passage {passage.id!r}: {exc}") from None
        payload: dict[str, Any] = _without_nul({**metadata, "text": passage.text, "title": passage.title, **fields,
                                                **meta_fields(metadata)})
        return payload

    def _passage(self, pid: str, doc: Mapping[str, Any]) -> Passage:
        return read_record(doc, FieldMapping(), what=f"{self.where}: row {pid!r} of {self.collection!r}",
                           fallback_id=pid)


def _key(record: Mapping[str, Any], keys: list[str]) -> object:
    return record.get(keys[0]) if len(keys) == 1 else None


def sql_filter(found: list[FilterClause]) -> tuple[Any, list[Any]]:
    """Every clause as one SQL condition over ``doc`` (each must hold) and its bound values, in order."""
    from psycopg import sql

    parts: list[Any] = []
    values: list[Any] = []
    for clause in found:
        tests: list[Any] = []
        if clause.present is not None:
            tests.append(sql.SQL("doc ? %s"))
            values.append(clause.present)
        if clause.any_of:
            ors = [_test(test, values) for test in clause.any_of]
            tests.append(sql.SQL("({})").format(sql.SQL(" OR ").join(ors)))
        for test in clause.none_of:
            tests.append(sql.SQL("NOT {}").format(_test(test, values)))
        parts.append(sql.SQL("({})").format(sql.SQL(" AND ").join(tests)) if tests else sql.SQL("TRUE"))
    return sql.SQL(" AND ").join(parts) if parts else sql.SQL("TRUE"), values


def _test(test: Test, values: list[Any]) -> Any:
    """One test as SQL, its values appended to ``values``: texts by JSONB's ``?|`` (a list field passes when one of
    its items is one of them), a range as a JSON path over the field's items with its bounds as variables."""
    from psycopg import sql
    from psycopg.types.json import Jsonb

    if isinstance(test, OneOf):
        values += [test.field, list(test.values)]
        return sql.SQL("coalesce((doc -> %s) ?| %s, false)")  # a passage without the field holds none of them
    bounds, checks = {}, []
    if test.low is not None:
        bounds["low"] = test.low
        checks.append("@ > $low" if test.low_open else "@ >= $low")
    if test.high is not None:
        bounds["high"] = test.high
        checks.append("@ < $high" if test.high_open else "@ <= $high")
    # the field is one of the store's own names (pushdown's: letters, digits, '_', '-'), quoted as a JSON string
    path = f"$.{json.dumps(test.field)}[*] ? ({' && '.join(checks) or 'true'})"
    values += [path, Jsonb(bounds)]
    return sql.SQL("jsonb_path_exists(doc, %s::jsonpath, %s)")


def _without_nul(value: Any) -> Any:
    """``value`` with every NUL character taken out of its strings: PostgreSQL's text and JSONB cannot hold U+0000,
    which a text extracted from a PDF or a scraped page may carry (RAMDocs' documents do), and one such passage
    would fail the whole batch's write."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {key: _without_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    return value
