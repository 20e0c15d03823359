"""A key -> value table in a SQLite file, as the caches keep it: the LLM calls and the embeddings.

SQLite commits are atomic, so an interrupted run keeps every value it finished and several processes share one file
(WAL). The file is opened on first use; one SQLite calls corrupt is moved aside and started afresh, and one that
cannot be written (disk full, read-only, no permission) is kept and still read. Files are owner-only: prompts,
replies and the texts behind vectors may be private.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from tanglerag.fileio import PRIVATE_MODE

log = logging.getLogger(__name__)

_BATCH = 500  # keys a SELECT ... IN asks for at once: under SQLite's variable limit on every build
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_OPEN_WAIT_S = 10.0


class SqliteTable:
    """``table (key TEXT PRIMARY KEY, value NOT NULL)`` in ``path``; ``label`` names it in warnings."""

    def __init__(self, path: Path, table: str, label: str) -> None:
        self.path, self.table, self.label = path, table, label
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._opened = False
        self.writable = True

    def get_many(self, keys: Iterable[str]) -> dict[str, object]:
        """The stored values of those keys that have one."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, object] = {}
        with self._lock:
            db = self._db()
            if db is None:
                return found
            try:
                for start in range(0, len(wanted), _BATCH):
                    batch = wanted[start:start + _BATCH]
                    found.update(db.execute(f"SELECT key, value FROM {self.table} WHERE key IN "  # noqa: S608
                                            f"({','.join('?' * len(batch))})", batch).fetchall())
            except sqlite3.DatabaseError as exc:
                log.warning("%s %s could not be read (%s); answering without it", self.label, self.path, exc)
                self._conn = None
        return found

    def get(self, key: str) -> object | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple[str, object]]) -> None:
        """Stored in one transaction; a failure to write stops writing for the run and keeps what is stored."""
        with self._lock:
            db = self._db()
            if db is None or not self.writable:
                return
            try:
                db.executemany(f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)",  # noqa: S608
                               list(items))
                db.commit()
            except sqlite3.DatabaseError as exc:  # disk full or turned read-only mid-run: what is stored stays
                db.rollback()
                self._stop_writing(exc)

    def _db(self) -> sqlite3.Connection | None:
        """The file's connection, opened on first use; None when it cannot be opened at all."""
        if self._opened:
            return self._conn
        self._opened = True
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):  # not SQLite, or damaged: keep it for inspection, start afresh
                aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
                os.replace(self.path, aside)
                log.warning("%s %s is damaged (%s); moved it to %s and started an empty cache",
                            self.label, self.path, exc, aside)
                self._conn = self._open()
            else:
                self._conn = self._open_read_only(exc)
        except OSError as exc:
            self._conn = self._open_read_only(exc)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        """The file opened for writing, tried again while another process holds it locked (up to ``_OPEN_WAIT_S``):
        replicas or workers starting at once on one new file race to switch it to WAL and create its table, and
        SQLite answers "database is locked" at once for that rather than waiting; taken as a file that cannot be
        written, it left 9 of 80 such processes without their cache for the whole run."""
        waited = 0.0
        while True:
            try:
                return self._open_once()
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) not in _BUSY or waited >= _OPEN_WAIT_S:
                    raise
                time.sleep(0.05)
                waited += 0.05

    def _open_once(self) -> sqlite3.Connection:
        if not self.path.exists():
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, PRIVATE_MODE))
        conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, value NOT NULL)")
            conn.execute(f"SELECT 1 FROM {self.table} LIMIT 1")  # noqa: S608
            conn.commit()
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _open_read_only(self, problem: Exception) -> sqlite3.Connection | None:
        """A file we cannot write still answers what it holds."""
        self._stop_writing(problem)
        if not self.path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False)
            conn.execute(f"SELECT 1 FROM {self.table} LIMIT 1")  # noqa: S608
            return conn
        except sqlite3.DatabaseError as exc:
            log.warning("%s %s cannot be read either (%s); answering without it", self.label, self.path, exc)
            return None

    def _stop_writing(self, problem: Exception) -> None:
        if self.writable:
            self.writable = False
            log.warning("%s %s cannot be written (%s); it is kept as it is, and new values are kept in memory "
                        "only for this run", self.label, self.path, problem)


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Corruption (the file is not, or no longer, a database), as opposed to a problem writing it."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
