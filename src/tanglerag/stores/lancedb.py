"""A LanceDB table as a store (the ``lancedb`` package, an optional extra: ``pip install 'tanglerag[lancedb]'``).

LanceDB is embedded: a folder on disk (``path``), an object-storage URI such as ``s3://bucket/prefix`` (``url``,
credentials from the environment or the URI, never shown in messages), or memory (neither). One table per collection:
the passage id, text and title as columns, the metadata as JSON, the vector as ``float32`` of the embedder's
dimension (ranked by cosine), and the filter fields as columns (``base.filter_fields``, the source case-folded rather
than lower-cased, and the ``meta.KEY`` terms and bounds of ``lancedb_filter``), so a ``--where`` becomes LanceDB's SQL predicate built from the typed conditions
(``lancedb_filter.predicate``), applied before the nearest are taken (``prefilter``).

Search is exact (a scan, recall 1) until a table holds ``ann_min_rows`` passages (100,000 by default): a scan of that
many 384-dimension vectors takes some tens of milliseconds, past it an IVF-HNSW index with scalar quantisation is
built, its candidates re-ranked on the full vectors (``refine_factor``); rows written after it are searched by scan
until the index is brought up to date (``optimize``, once they are a tenth of it).

A table tanglerag writes is known by its filter-field columns; any other was written by another tool and is read
through ``store.fields`` (the vector column: ``vector``, else its one fixed-size list of floats): a ``--where`` on it
is refused in one line. Each ``upsert`` is one merge-insert, one commit of a new table version: all or nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.errors import InputError
from tanglerag.redaction import without_credentials
from tanglerag.stores.base import (
    AUTHORITY,
    DATE_DAYS,
    DATE_LAST_DAYS,
    FILTER_FIELDS,
    SOURCE,
    FieldMapping,
    ServerStore,
    StoredHit,
    StoreError,
    check_write,
    filter_fields,
    read_record,
)
from tanglerag.stores.lancedb_filter import (
    META_BOUNDS,
    META_TERMS,
    Unsupported,
    meta_bounds,
    meta_terms,
    predicate,
    sql_text,
)
from tanglerag.types import Passage
from tanglerag.where import Where

if TYPE_CHECKING:
    import pyarrow as pa
    from lancedb.db import DBConnection
    from lancedb.table import Table

VECTOR = "vector"
METADATA = "metadata"
OWN_COLUMNS = ("id", "text", "title", VECTOR, METADATA, *FILTER_FIELDS, META_TERMS, META_BOUNDS)
ANN_MIN_ROWS = 100_000
"""Passages from which a table gets an ANN index; below it every search is an exact scan."""
REFINE_FACTOR = 10
"""ANN candidates re-ranked on the full vectors per result wanted (recall 1.0 on clustered test data at 5)."""
_RUST_PLACE = re.compile(r",?\s*/\S+\.rs:\d+:\d+$")


class LanceDBStore(ServerStore):
    """One table of a LanceDB database: a local folder (``path``), an object-storage URI (``url``) or memory."""

    name: ClassVar[str] = "lancedb"

    def __init__(self, collection: str, *, url: str | None = None, path: Path | None = None,
                 fields: FieldMapping | None = None, timeout_s: float = 10.0,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, ann_min_rows: int = ANN_MIN_ROWS,
                 api_key: str | None = None, embedder: str | None = None) -> None:
        self.collection = collection
        self.embedder = embedder
        self.uri = url or (str(path) if path is not None else "memory://")
        self.fields = fields or FieldMapping()
        self.timeout_s, self.tiers, self.ann_min_rows = timeout_s, dict(tiers), ann_min_rows
        self.where = f"lancedb at {without_credentials(self.uri)}"
        self._api_key = api_key  # LanceDB Cloud's, for a db:// URI (not tried here); storage reads the environment
        self._db: DBConnection | None = None

    # -- connection -----------------------------------------------------------------------
    @property
    def db(self) -> DBConnection:
        if self._db is None:
            try:
                import lancedb
            except ImportError:
                raise StoreError("store.backend=lancedb needs lancedb: pip install 'tanglerag[lancedb]'") from None
            # listing an ANN index warns on stderr at each process unless told whether to count its centroids
            os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
            seconds = f"{self.timeout_s:g}s"  # object storage: each request's limit (a folder ignores it)
            with self._reaching("open"):
                self._db = lancedb.connect(self.uri, api_key=self._api_key,
                                           storage_options={"timeout": seconds, "connect_timeout": seconds})
        return self._db

    @contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """A call to LanceDB; its failures (storage unreachable or denied, a timeout, a damaged table) as one line
        naming the store, never a URI's credentials."""
        try:
            yield
        except StoreError:
            raise
        except TimeoutError:
            raise StoreError(self._line(what, f"no answer within {self.timeout_s:g} s")) from None
        except (OSError, RuntimeError, ValueError) as exc:
            why = _first_line(str(exc)) or type(exc).__name__
            if "timeout" in why.lower():  # LanceDB reports a query past its limit as a RuntimeError
                why = f"no answer within {self.timeout_s:g} s ({why})"
            raise StoreError(self._line(what, why)) from None

    def _line(self, what: str, why: str) -> str:
        return without_credentials(f"{self.where}, collection {self.collection!r}: {what} failed: {why}")

    def _table(self) -> Table | None:
        db = self.db
        with self._reaching("open the collection"):
            try:
                return db.open_table(self.collection)
            except ValueError as exc:
                if "was not found" in str(exc):  # LanceDB's word for a missing table (it has no class of its own)
                    return None
                raise

    def _existing(self) -> Table:
        table = self._table()
        if table is None:
            raise StoreError(f"{self.where}: no collection {self.collection!r} (write one with tanglerag index "
                             "--store lancedb, or name another with --collection)")
        return table

    # -- the contract ---------------------------------------------------------------------
    def dimension(self) -> int | None:
        table = self._table()
        return None if table is None else _vector_size(table.schema, self._vector_column(table.schema))

    def written_by(self) -> str | None:
        table = self._table()
        held = (table.schema.metadata or {}).get(EMBEDDER_KEY) if table is not None else None
        return held.decode() if held else None

    def count(self) -> int:
        table = self._table()
        if table is None:
            return 0
        with self._reaching("count"):
            return int(table.count_rows())

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        self.replace(passages, vectors, [])

    def replace(self, passages: Sequence[Passage], vectors: np.ndarray, stale: Sequence[str]) -> None:
        """Upsert ``passages`` and delete the ``stale`` ids in one commit (one merge that also deletes the rows it
        names and was not given): the table's next version holds the documents as they are now, the one before as
        they were, never a mix."""
        check_write(self.where, self.fields, passages, vectors)
        if not passages:
            self.delete(stale)
            return
        last = {passage.id: i for i, passage in enumerate(passages)}  # one row an id: the last one given wins
        rows = self._rows([passages[i] for i in last.values()], np.asarray(vectors, dtype="float32")[list(last.values())])
        table = self._table()
        if table is None:
            with self._reaching(f"create the collection with {rows.num_rows} passages"):
                table = self.db.create_table(self.collection, data=rows)
        else:
            self._check_own(table, int(rows.schema.field(VECTOR).type.list_size))
            merge = table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            if stale:
                merge = merge.when_not_matched_by_source_delete(f"id IN ({', '.join(sql_text(i) for i in stale)})")
            with self._reaching(f"write {rows.num_rows} passages"):
                merge.execute(rows)
        self._keep_index(table)

    def delete(self, ids: Sequence[str]) -> None:
        table = self._table()
        if not ids or table is None:
            return
        if self.fields.id is None:
            raise StoreError(f"{self.where}: collection {self.collection!r} has no id field (store.fields.id): "
                             "passages cannot be deleted by id")
        column = _identifier(self.fields.id)
        with self._reaching(f"delete {len(ids)} passages"):
            table.delete(f"{column} IN ({', '.join(sql_text(i) for i in ids)})")

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        table = self._table()
        if table is None or not _own(table.schema):
            return
        with self._reaching("read the passages' metadata"):
            rows = table.search().select(["id", METADATA]).limit(None).to_arrow().to_pylist()  # no vectors read
        yield from ((row["id"], json.loads(row[METADATA])) for row in rows)

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        refused = self.unsupported(where) if where is not None else None
        if refused is not None:
            raise StoreError(refused)
        table = self._existing()
        column = self._vector_column(table.schema)
        query = np.asarray(vector, dtype="float32").reshape(-1)
        size = _vector_size(table.schema, column)
        if query.shape[0] != size:
            raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {size} dimensions, the "
                             f"query has {query.shape[0]}")
        if k <= 0:
            return []
        own = _own(table.schema)
        read = ["id", "text", "title", METADATA] if own else [n for n in table.schema.names if n != column]
        read.append("_distance")
        with self._reaching("search"):
            search: Any = table.search(query, vector_column_name=column)
            search = search.distance_type("cosine").select(read).limit(k)
            if where is not None:
                search = search.where(predicate(where), prefilter=True)
            if table.list_indices():
                search = search.refine_factor(REFINE_FACTOR)
            if self.fields.id is None:
                search = search.with_row_id(True)
            found = search.to_arrow(timeout=timedelta(seconds=self.timeout_s)).to_pylist()
        return [StoredHit(passage=self._own_passage(row) if own else self._foreign_passage(row),
                          score=1.0 - float(row["_distance"])) for row in found]

    def unsupported(self, where: Where) -> str | None:
        table = self._table()
        if table is not None and not _own(table.schema):
            return (f"{self.where}: collection {self.collection!r} was not written by tanglerag and holds no filter "
                    f"fields, so the filter {where.text.strip()!r} cannot be pushed down: ask without it")
        try:
            predicate(where)
        except Unsupported as exc:
            return f"{self.where}: {exc}"
        return None

    def close(self) -> None:
        self._db = None  # LanceDB holds no connection: files are opened per call

    # -- writing --------------------------------------------------------------------------
    def _rows(self, passages: Sequence[Passage], vectors: np.ndarray) -> pa.Table:
        """The passages as one Arrow table of tanglerag's layout (the filter fields typed, absent ones null)."""
        import pyarrow as pa

        records = [self._record(passage) for passage in passages]
        dimension = int(vectors.shape[1])
        columns = {name: [record[name] for record in records] for name in OWN_COLUMNS if name != VECTOR}
        columns[VECTOR] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), dimension)
        return pa.table(columns, schema=own_schema(dimension, self.embedder))

    def _record(self, passage: Passage) -> dict[str, Any]:
        metadata = passage.model_dump(mode="json")["metadata"]
        fields: dict[str, Any] = {}
        for name in ("date", "source", "authority"):  # each read alone: a bad date leaves source filterable
            with suppress(InputError):
                fields |= filter_fields({name: metadata.get(name)}, self.tiers)
        if SOURCE in fields:  # case-folded, as Where compares it (lower case differs for ß, ligatures, ...)
            fields[SOURCE] = metadata["source"].strip().casefold()
        return {"id": passage.id, "text": passage.text, "title": passage.title, METADATA: json.dumps(metadata),
                **{name: fields.get(name) for name in FILTER_FIELDS}, META_TERMS: meta_terms(metadata),
                META_BOUNDS: json.dumps(meta_bounds(metadata))}

    def _check_own(self, table: Table, size: int) -> None:
        held = _vector_size(table.schema, VECTOR) if _own(table.schema) else None
        if held is None:
            raise StoreError(f"{self.where}: collection {self.collection!r} was written by another tool; tanglerag "
                             "writes only its own tables (name another with --collection)")
        if held != size:
            raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {held} dimensions, "
                             f"these have {size}: use the collection's embedder, or another collection")

    def _keep_index(self, table: Table) -> None:
        """An ANN index once the table holds ``ann_min_rows``; brought up to date when a tenth of it is unindexed."""
        from lancedb.index import HnswSq

        with self._reaching("index the collection"):
            indices = list(table.list_indices())
            if not indices:
                if table.count_rows() >= self.ann_min_rows:
                    table.create_index(VECTOR, config=HnswSq(distance_type="cosine"))
                return
            indexed, unindexed = indices[0].num_indexed_rows or 0, indices[0].num_unindexed_rows or 0
            if unindexed * 10 >= max(indexed, 1):
                table.optimize()

    # -- reading --------------------------------------------------------------------------
    def _vector_column(self, schema: pa.Schema) -> str:
        """``vector``, else the one fixed-size list of floats of the table."""
        import pyarrow as pa

        if VECTOR in schema.names:
            return VECTOR
        lists = [str(f.name) for f in schema
                 if pa.types.is_fixed_size_list(f.type) and pa.types.is_floating(f.type.value_type)]
        if len(lists) != 1:
            raise StoreError(f"{self.where}: collection {self.collection!r} has no column 'vector' and "
                             f"{len(lists)} vector columns ({', '.join(lists) or 'none'}); tanglerag reads one")
        return lists[0]

    @staticmethod
    def _own_passage(row: Mapping[str, Any]) -> Passage:
        return Passage(id=row["id"], title=row["title"] or "", text=row["text"], metadata=json.loads(row[METADATA]))

    def _foreign_passage(self, row: Mapping[str, Any]) -> Passage:
        """A row of another tool's table, read through ``store.fields`` (an empty cell is no metadata)."""
        return read_record({k: v for k, v in row.items() if v is not None}, self.fields,
                           what=f"{self.where}: a row of collection {self.collection!r}", fallback_id=row.get("_rowid"),
                           skip=frozenset({"_distance", "_rowid"}))


EMBEDDER_KEY = b"tanglerag:embedder"
"""The schema metadata key of the embedder a table tanglerag created was embedded with."""


def own_schema(dimension: int, embedder: str | None = None) -> pa.Schema:
    """The Arrow schema of a table tanglerag writes. The metadata is JSON in a plain string (kept as written, its
    keys in order); the meta bounds are of LanceDB's JSON type, which its filter's ``json_extract`` reads; the
    schema's own metadata names the embedder."""
    import pyarrow as pa

    return pa.schema(metadata={EMBEDDER_KEY: embedder.encode()} if embedder else None, fields=[
        pa.field("id", pa.string(), nullable=False), pa.field("text", pa.string()), pa.field("title", pa.string()),
        pa.field(VECTOR, pa.list_(pa.float32(), dimension)), pa.field(METADATA, pa.string()),
        pa.field(DATE_DAYS, pa.int32()), pa.field(DATE_LAST_DAYS, pa.int32()), pa.field(SOURCE, pa.string()),
        pa.field(AUTHORITY, pa.float64()), pa.field(META_TERMS, pa.list_(pa.string())),
        pa.field(META_BOUNDS, pa.json_(pa.string()))])


def _own(schema: pa.Schema) -> bool:
    """Whether tanglerag wrote the table: it holds every filter-field column."""
    return all(name in schema.names for name in OWN_COLUMNS)


def _vector_size(schema: pa.Schema, column: str) -> int:
    return int(schema.field(column).type.list_size)


def _identifier(name: str) -> str:
    """A column name in a SQL predicate (backticks; a name holding one is refused, as LanceDB cannot read it)."""
    if "`" in name:
        raise StoreError(f"column name {name!r} holds a backtick, which a LanceDB filter cannot name")
    return f"`{name}`"


def _first_line(text: str) -> str:
    """An error's first line, without the Rust source position LanceDB appends to it."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return _RUST_PLACE.sub("", line)[:300]
