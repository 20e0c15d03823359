"""Two-level cache of LLM calls: a bounded in-process LRU (cachetools) in front of a SQLite file.

SQLite commits are atomic, so an interrupted evaluation keeps every call it finished
and a re-run resumes where it stopped. Keys hash everything that can change an answer. Only a file that
SQLite calls corrupt is moved aside; one that cannot be written (disk full, read-only) is kept and still read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path

from cachetools import LRUCache

from tanglerag.fileio import PRIVATE_MODE
from tanglerag.llm.base import GenerationParams, RawCompletion
from tanglerag.trace import Message

log = logging.getLogger(__name__)

_SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def cache_key(backend: str, model_id: str, messages: list[Message], params: GenerationParams) -> str:
    payload = {
        "backend": backend,
        "model": model_id,
        "messages": [m.model_dump() for m in messages],
        # without a schema the key is what it was before schemas existed: cached calls stay valid
        "params": params.model_dump(mode="json", exclude={"json_schema"} if params.json_schema is None else None),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CallCache:
    def __init__(self, path: Path | None, memory_entries: int = 4096) -> None:
        """``path=None`` keeps the cache in memory only (then nothing is evicted: it is the only copy).

        With a file, the memory layer keeps the ``memory_entries`` most recently used calls, so a
        long evaluation does not grow without bound.
        """
        self.path = path
        self._memory: MutableMapping[str, RawCompletion] = LRUCache(memory_entries) if path is not None else {}
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._writable = True
        self._opened = False

    def _db(self) -> sqlite3.Connection | None:
        """The file's connection, opened on first use; None when there is no file or it cannot be opened."""
        if self.path is None or self._opened:
            return self._conn
        self._opened = True
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._conn = self._open(self.path)
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):  # not SQLite, or damaged: keep it for inspection, start afresh
                aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
                os.replace(self.path, aside)
                log.warning("LLM cache %s is damaged (%s); moved it to %s and started an empty cache",
                            self.path, exc, aside)
                self._conn = self._open(self.path)
            else:
                self._conn = self._open_read_only(exc)
        except OSError as exc:
            self._conn = self._open_read_only(exc)
        return self._conn

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        if not path.exists():  # prompts and replies may be private: owner-only, like index data
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_MODE))
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.execute("SELECT 1 FROM calls LIMIT 1")
            conn.commit()
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _open_read_only(self, problem: Exception) -> sqlite3.Connection | None:
        """A file we cannot write (disk full, read-only, no permission) still answers what it holds."""
        assert self.path is not None
        self._stop_writing(problem)
        if not self.path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False)
            conn.execute("SELECT 1 FROM calls LIMIT 1")
            return conn
        except sqlite3.DatabaseError as exc:
            log.warning("LLM cache %s cannot be read either (%s); answering without it", self.path, exc)
            return None

    def _stop_writing(self, problem: Exception) -> None:
        if self._writable:
            self._writable = False
            log.warning("LLM cache %s cannot be written (%s); it is kept as it is, and new calls are cached in "
                        "memory only for this run", self.path, problem)

    def get(self, key: str) -> RawCompletion | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                return hit
            db = self._db()
            if db is None:
                return None
            try:
                row = db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                log.warning("LLM cache %s could not be read (%s); answering without it", self.path, exc)
                self._conn = None
                return None
            if row is None:
                return None
            hit = RawCompletion.model_validate_json(row[0])
            self._memory[key] = hit
            return hit

    def put(self, key: str, value: RawCompletion) -> None:
        with self._lock:
            self._memory[key] = value
            db = self._db()
            if db is None or not self._writable:
                return
            try:
                db.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", (key, value.model_dump_json()))
                db.commit()
            except sqlite3.DatabaseError as exc:  # disk full or turned read-only mid-run: what is stored stays
                db.rollback()
                self._stop_writing(exc)


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Corruption (the file is not, or no longer, a database), as opposed to a problem writing it."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
