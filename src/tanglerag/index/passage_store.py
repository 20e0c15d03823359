"""The passages of one saved index version in SQLite, read by position or id without loading them all.

A search needs the text of its top-k passages only; a corpus of millions of passages read into Python objects
at every load would cost gigabytes and minutes. One file per version (``passages.sqlite3``), written whole before
the manifest names the version, so a kill mid-write leaves the old version in use; opened read-only.

Each row names the document it belongs to (``doc_id``): replacing or removing a document acts on the rows that name
it, never on ids that merely look like its chunks (``x#1`` may be a document of its own). Stores written before the
column existed are read with the rule their writer used (a chunk's ``source_id``/``chunk`` metadata) and gain the
column when the next save writes a new version. A damaged file is an ``IndexStoreError`` naming it, on open
(``verify``: SQLite's quick_check) and on any read that meets the damage later.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any, NoReturn, TypeVar, overload

from tanglerag.errors import IndexStoreError
from tanglerag.index.documents import document_id
from tanglerag.types import Passage

T = TypeVar("T")
FILE = "passages.sqlite3"
BATCH = 10_000  # rows per insert, and ids per position lookup (well under SQLite's 32,766 variables)
COLUMNS = "id, title, text, metadata"
LEGACY_DOC = "legacy_doc_id(id, metadata)"
"""A row's document in a store without ``doc_id``: the rule the release that wrote it used (a SQL function)."""


class StoreDamaged(IndexStoreError):
    """The passage store cannot be read: SQLite finds it corrupt, or it lacks rows its count promises."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path} is missing or damaged ({reason}); rebuild the index from its corpus: "
                         f"tanglerag index CORPUS --out {_index_folder(path)}")


class PassageStore(Sequence[Passage]):
    """A read-only sequence of passages in their index positions (0-based), backed by one SQLite file."""

    def __init__(self, path: Path, *, verify: bool = False) -> None:
        """``verify``: run SQLite's quick_check first (it reads every page: on a 100k-passage store, 0.2-0.4 s when the
        file is cached, 0.3-0.6 s when not)."""
        self.path = path
        self.damage: str | None = None  # set by the first read that met damage (the service is then not ready)
        self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        self._db.create_function("legacy_doc_id", 2, _legacy_doc_id, deterministic=True)
        self._lock = threading.Lock()  # one connection, shared by the service's threads
        if verify:
            self._verify()
        columns = {row[1] for row in self._rows("PRAGMA table_info(passages)")}
        self._doc = "doc_id" if "doc_id" in columns else LEGACY_DOC
        self._length = int(self._one("SELECT count(*) FROM passages")[0])

    def _verify(self) -> None:
        """SQLite's quick_check answers 'ok', lists problems, or raises on pages too broken to list. It reads every
        page in B-tree order, which jumps about the file; read once front to back first, the file comes off the disk
        as a stream (a 100k-passage store from a cold cache: 0.3-0.6 s instead of 2.4-3.4 s)."""
        _read_through(self.path)
        problems = self._rows("PRAGMA quick_check")
        if problems != [("ok",)]:
            self._damaged(str(problems[0][0]) if problems else "quick_check gave no answer")

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of one query; SQLite's word on a corrupt page becomes ``StoreDamaged``."""
        try:
            with self._lock:
                return [tuple(row) for row in self._db.execute(sql, args).fetchall()]
        except sqlite3.DatabaseError as exc:
            self._damaged(str(exc).strip() or type(exc).__name__, exc)

    def _damaged(self, reason: str, cause: Exception | None = None) -> NoReturn:
        error = StoreDamaged(self.path, reason)
        self.damage = str(error)
        raise error from cause

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        rows = self._rows(sql, args)
        if not rows:
            self._damaged(f"no row for {args}, though the store counts {self._length}")
        return rows[0]

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Passage: ...

    @overload
    def __getitem__(self, index: slice) -> list[Passage]: ...

    def __getitem__(self, index: int | slice) -> Passage | list[Passage]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(index)
        return _passage(self._one(f"SELECT {COLUMNS} FROM passages WHERE pos = ?", (position,)))

    def __iter__(self) -> Iterator[Passage]:
        """Every passage in position order, a batch of rows at a time."""
        for start in range(0, self._length, BATCH):
            rows = self._rows(f"SELECT {COLUMNS} FROM passages WHERE pos >= ? AND pos < ? ORDER BY pos",
                              (start, start + BATCH))
            if len(rows) != min(BATCH, self._length - start):
                self._damaged(f"rows {start}.. are missing, though the store counts {self._length}")
            yield from map(_passage, rows)

    def positions(self, ids: Iterable[str]) -> dict[str, int]:
        """Position of each of these ids the store holds (an id it lacks is left out)."""
        return {pid: int(pos) for pid, pos in self._by_ids("pos", ids)}

    def metadata_at(self, positions: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The metadata of the passages at these positions (a filtered search reads its candidates' without their
        texts), looked up a batch at a time with bound parameters."""
        found: dict[int, dict[str, Any]] = {}
        for chunk in batched(positions, BATCH):
            rows = self._rows(f"SELECT pos, metadata FROM passages WHERE pos IN ({','.join('?' * len(chunk))})", chunk)
            found.update((int(pos), json.loads(metadata)) for pos, metadata in rows)
        return found

    def owners(self, ids: Iterable[str]) -> dict[str, str]:
        """The document of each of these passage ids the store holds."""
        return {pid: str(doc) for pid, doc in self._by_ids(self._doc, ids)}

    def document_ids(self) -> list[str]:
        """Each position's document, in position order (a writer's whole view of the index)."""
        return [str(doc) for (doc,) in self._rows(f"SELECT {self._doc} FROM passages ORDER BY pos")]

    def file_hashes(self) -> dict[str, str]:
        """Each document read from a file (its chunks' metadata holds ``path`` and ``sha256``): its id -> the sha256
        of the file's bytes when it was indexed, read inside SQLite (no passage becomes a Python object)."""
        rows = self._rows(f"SELECT DISTINCT {self._doc}, json_extract(metadata, '$.sha256') FROM passages "
                          "WHERE json_extract(metadata, '$.path') IS NOT NULL")
        return {str(doc): str(digest or "") for doc, digest in rows}

    def documents(self, doc_ids: Iterable[str]) -> dict[str, list[Passage]]:
        """Every stored passage of each of these documents the store holds, in position order (a lookup on the
        ``doc_id`` index per document; in a store without it, the old rule's range of ids ``ID``, ``ID#...``)."""
        found: dict[str, list[Passage]] = {}
        for doc in dict.fromkeys(doc_ids):
            if self._doc == LEGACY_DOC:
                rows = self._rows(f"SELECT {COLUMNS} FROM passages WHERE (id = ? OR (id >= ? AND id < ?)) AND "
                                  f"{LEGACY_DOC} = ? ORDER BY pos", (doc, f"{doc}#", f"{doc}$", doc))
            else:
                rows = self._rows(f"SELECT {COLUMNS} FROM passages WHERE doc_id = ? ORDER BY pos", (doc,))
            if rows:
                found[doc] = [_passage(row) for row in rows]
        return found

    def heads(self, doc_ids: Iterable[str]) -> dict[str, Passage]:
        """The first stored passage of each of these documents the store holds: its head, with the title, front
        matter and opening words that say what the document is and when it was written."""
        found: dict[str, Passage] = {}
        for doc in dict.fromkeys(doc_ids):
            if self._doc == LEGACY_DOC:
                first = self.documents([doc]).get(doc, [])[:1]
            else:
                first = [_passage(row) for row in self._rows(
                    f"SELECT {COLUMNS} FROM passages WHERE doc_id = ? ORDER BY pos LIMIT 1", (doc,))]
            if first:
                found[doc] = first[0]
        return found

    def _by_ids(self, column: str, ids: Iterable[str]) -> Iterator[tuple[Any, ...]]:
        """(id, ``column``) of each of these ids the store holds, looked up a batch at a time."""
        for chunk in batched(ids, BATCH):
            yield from self._rows(f"SELECT id, {column} FROM passages WHERE id IN ({','.join('?' * len(chunk))})",
                                  chunk)

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def write(path: Path, passages: Iterable[Passage]) -> None:
        """Write ``passages`` in order into a new file at ``path``, streaming them in batches."""
        with StoreWriter(path) as writer:
            for chunk in batched(passages, BATCH):
                writer.append(chunk)


class StoreWriter:
    """Appends passages to a new store file batch by batch (a corpus need not fit in memory); the id index is
    built and everything committed on a clean exit."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path)
        self._db.create_function("legacy_doc_id", 2, _legacy_doc_id, deterministic=True)
        self.count = 0
        with _full_disk_as_oserror():  # doc_id last: a release before it reads (and copies) the columns it knows
            self._db.execute("CREATE TABLE passages (pos INTEGER PRIMARY KEY, id TEXT NOT NULL, title TEXT NOT NULL, "
                             "text TEXT NOT NULL, metadata TEXT NOT NULL, doc_id TEXT NOT NULL)")

    def copy_from(self, path: Path, skip: Collection[str] = ()) -> None:
        """Append every passage of the store at ``path`` but those in ``skip``, in order, inside SQLite (no row
        becomes a Python object: a copy of millions costs seconds, not gigabytes). A store without ``doc_id``
        gets it here, by the rule its writer used."""
        with _full_disk_as_oserror(), _source_damage(path):
            where = ""
            if skip:
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS skipped (id TEXT PRIMARY KEY)")
                self._db.execute("DELETE FROM skipped")
                self._db.executemany("INSERT OR IGNORE INTO skipped VALUES (?)", [(i,) for i in skip])
                where = " WHERE id NOT IN (SELECT id FROM skipped)"
            self._db.execute("ATTACH DATABASE ? AS source", (str(path),))
            columns = {row[1] for row in self._db.execute("PRAGMA source.table_info(passages)")}
            doc = "doc_id" if "doc_id" in columns else LEGACY_DOC
            copied = self._db.execute(f"INSERT INTO passages SELECT ? + row_number() OVER (ORDER BY pos) - 1, "
                                      f"{COLUMNS}, {doc} FROM source.passages{where}", (self.count,)).rowcount
            self._db.commit()
            self._db.execute("DETACH DATABASE source")
        self.count += copied

    def append(self, passages: Sequence[Passage]) -> None:
        rows = [(self.count + i, p.id, p.title, p.text, json.dumps(p.metadata), document_id(p))
                for i, p in enumerate(passages)]
        with _full_disk_as_oserror():
            self._db.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?)", rows)
        self.count += len(rows)

    def first_duplicate(self) -> str | None:
        """A passage id written more than once, if any (a build from shards checks ids across them this way, in
        SQLite, rather than holding every id in memory)."""
        row = self._db.execute("SELECT id FROM passages GROUP BY id HAVING count(*) > 1 LIMIT 1").fetchone()
        return None if row is None else str(row[0])

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                with _full_disk_as_oserror():
                    self._db.execute("CREATE INDEX passages_id ON passages (id)")
                    self._db.execute("CREATE INDEX passages_doc ON passages (doc_id)")
                    self._db.commit()
        finally:
            self._db.close()


@contextmanager
def _full_disk_as_oserror() -> Iterator[None]:
    """SQLite names a full disk in its own error; callers report the OSError (``fileio.reporting_disk_full``)."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
            raise OSError(errno.ENOSPC, "No space left on device") from exc
        raise


def _read_through(path: Path) -> None:
    """Read the file once, in order, into the system's cache; a disk that fails to read it is damage too."""
    try:
        with path.open("rb", buffering=0) as fh:
            while fh.read(1 << 20):
                continue
    except OSError as exc:
        raise StoreDamaged(path, exc.strerror or str(exc)) from exc


@contextmanager
def _source_damage(path: Path) -> Iterator[None]:
    """A copy that fails on the source's pages (not on a full disk: that is ours) names the damaged source."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
            raise
        raise StoreDamaged(path, str(exc).strip() or type(exc).__name__) from exc


def batched(items: Iterable[T], size: int) -> Iterator[tuple[T, ...]]:
    """itertools.batched, which Python 3.11 lacks."""
    iterator = iter(items)
    while chunk := tuple(islice(iterator, size)):
        yield chunk


def _passage(row: tuple[Any, ...]) -> Passage:
    pid, title, text, metadata = row
    return Passage.model_construct(id=pid, title=title, text=text, metadata=json.loads(metadata))


def _legacy_doc_id(pid: str, metadata: str) -> str:
    """A row's document as the release before ``doc_id`` decided it: from the chunk marks it wrote."""
    return document_id(Passage.model_construct(id=pid, title="", text="", metadata=json.loads(metadata)))


def _index_folder(path: Path) -> Path:
    """The index folder a store belongs to (its version sub-folder's parent), for the command that rebuilds it."""
    return path.parent.parent if path.parent.name.startswith("data-") else path.parent
