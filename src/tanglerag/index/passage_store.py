"""The passages of one saved index version in SQLite, read by position or id without loading them all.

A search needs the text of its top-k passages only; a corpus of millions of passages read into Python objects
at every load would cost gigabytes and minutes. One file per version (``passages.sqlite3``), written whole before
the manifest names the version, so a kill mid-write leaves the old version in use; opened read-only.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar, overload

from tanglerag.index.documents import document_id
from tanglerag.types import Passage

T = TypeVar("T")
FILE = "passages.sqlite3"
BATCH = 10_000  # rows per insert, and ids per position lookup (well under SQLite's 32,766 variables)


class PassageStore(Sequence[Passage]):
    """A read-only sequence of passages in their index positions (0-based), backed by one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()  # one connection, shared by the service's threads
        self._length = int(self._one("SELECT count(*) FROM passages")[0])

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        if row is None:
            raise IndexError(args)
        return tuple(row)

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
        return _passage(self._one("SELECT id, title, text, metadata FROM passages WHERE pos = ?", (position,)))

    def __iter__(self) -> Iterator[Passage]:
        """Every passage in position order, a batch of rows at a time."""
        for start in range(0, self._length, BATCH):
            with self._lock:
                rows = self._db.execute("SELECT id, title, text, metadata FROM passages WHERE pos >= ? AND pos < ? "
                                        "ORDER BY pos", (start, start + BATCH)).fetchall()
            yield from map(_passage, rows)

    def positions(self, ids: Iterable[str]) -> dict[str, int]:
        """Position of each of these ids the store holds (an id it lacks is left out)."""
        found: dict[str, int] = {}
        for chunk in batched(ids, BATCH):
            marks = ",".join("?" * len(chunk))
            with self._lock:
                found.update(self._db.execute(f"SELECT id, pos FROM passages WHERE id IN ({marks})", chunk).fetchall())
        return found

    def documents(self, doc_ids: Iterable[str]) -> list[Passage]:
        """Every stored passage of these documents: the passage under the document's own id and its chunks
        ``ID#n`` (a range of the id index, so a lookup per document, not a scan)."""
        found: list[Passage] = []
        for doc in dict.fromkeys(doc_ids):
            with self._lock:
                rows = self._db.execute("SELECT id, title, text, metadata FROM passages WHERE id = ? OR "
                                        "(id >= ? AND id < ?) ORDER BY pos", (doc, f"{doc}#", f"{doc}$")).fetchall()
            found += [p for p in map(_passage, rows) if document_id(p) == doc]
        return found

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
        self.count = 0
        with _full_disk_as_oserror():
            self._db.execute("CREATE TABLE passages (pos INTEGER PRIMARY KEY, id TEXT NOT NULL, title TEXT NOT NULL, "
                             "text TEXT NOT NULL, metadata TEXT NOT NULL)")

    def copy_from(self, path: Path, skip: set[str]) -> None:
        """Append every passage of the store at ``path`` but those in ``skip``, in order, inside SQLite (no row
        becomes a Python object: a copy of millions costs seconds, not gigabytes)."""
        with _full_disk_as_oserror():
            self._db.execute("CREATE TEMP TABLE skipped (id TEXT PRIMARY KEY)")
            self._db.executemany("INSERT OR IGNORE INTO skipped VALUES (?)", [(i,) for i in skip])
            self._db.execute("ATTACH DATABASE ? AS source", (str(path),))
            self._db.execute("INSERT INTO passages SELECT ? + row_number() OVER (ORDER BY pos) - 1, id, title, text, "
                             "metadata FROM source.passages WHERE id NOT IN (SELECT id FROM skipped)", (self.count,))
            self._db.commit()
            self._db.execute("DETACH DATABASE source")
        self.count = int(self._db.execute("SELECT count(*) FROM passages").fetchone()[0])

    def append(self, passages: Sequence[Passage]) -> None:
        rows = [(self.count + i, p.id, p.title, p.text, json.dumps(p.metadata)) for i, p in enumerate(passages)]
        with _full_disk_as_oserror():
            self._db.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?)", rows)
        self.count += len(rows)

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                with _full_disk_as_oserror():
                    self._db.execute("CREATE INDEX passages_id ON passages (id)")
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


def batched(items: Iterable[T], size: int) -> Iterator[tuple[T, ...]]:
    """itertools.batched, which Python 3.11 lacks."""
    iterator = iter(items)
    while chunk := tuple(islice(iterator, size)):
        yield chunk


def _passage(row: tuple[Any, ...]) -> Passage:
    pid, title, text, metadata = row
    return Passage.model_construct(id=pid, title=title, text=text, metadata=json.loads(metadata))
