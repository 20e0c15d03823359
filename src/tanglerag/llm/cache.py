"""Two-level cache of LLM calls: a bounded in-process LRU in front of a SQLite file.

SQLite commits are atomic, so an interrupted evaluation keeps every call it finished
and a re-run resumes where it stopped. Keys hash everything that can change an answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

from tanglerag.llm.base import GenerationParams, Message, RawCompletion

log = logging.getLogger(__name__)

_SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def cache_key(backend: str, model_id: str, messages: list[Message], params: GenerationParams) -> str:
    payload = {
        "backend": backend,
        "model": model_id,
        "messages": [m.model_dump() for m in messages],
        "params": params.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CallCache:
    def __init__(self, path: Path | None, memory_entries: int = 4096) -> None:
        """``path=None`` keeps the cache in memory only (then nothing is evicted: it is the only copy).

        With a file, the memory layer keeps the ``memory_entries`` most recently used calls, so a
        long evaluation does not grow without bound.
        """
        self.path = path
        self.memory_entries = memory_entries
        self._memory: OrderedDict[str, RawCompletion] = OrderedDict()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError as exc:  # not SQLite, or damaged: keep it for inspection, start afresh
                aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
                os.replace(self.path, aside)
                log.warning("LLM cache %s is damaged (%s); moved it to %s and started an empty cache",
                            self.path, exc, aside)
                self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.execute("SELECT 1 FROM calls LIMIT 1")
            conn.commit()
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> RawCompletion | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                return hit
            db = self._db()
            if db is None:
                return None
            row = db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            hit = RawCompletion.model_validate_json(row[0])
            self._remember(key, hit)
            return hit

    def put(self, key: str, value: RawCompletion) -> None:
        with self._lock:
            self._remember(key, value)
            db = self._db()
            if db is not None:
                db.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", (key, value.model_dump_json()))
                db.commit()

    def _remember(self, key: str, value: RawCompletion) -> None:
        self._memory[key] = value
        self._memory.move_to_end(key)
        if self.path is not None:
            while len(self._memory) > self.memory_entries:
                self._memory.popitem(last=False)
