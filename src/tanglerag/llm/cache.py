"""Two-level cache of LLM calls: an in-process dict in front of a SQLite file.

SQLite commits are atomic, so an interrupted evaluation keeps every call it finished
and a re-run resumes where it stopped. Keys hash everything that can change an answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from tanglerag.llm.base import GenerationParams, Message, RawCompletion

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
    def __init__(self, path: Path | None) -> None:
        """``path=None`` keeps the cache in memory only."""
        self.path = path
        self._memory: dict[str, RawCompletion] = {}
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        return self._conn

    def get(self, key: str) -> RawCompletion | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                return hit
            db = self._db()
            if db is None:
                return None
            row = db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            hit = RawCompletion.model_validate_json(row[0])
            self._memory[key] = hit
            return hit

    def put(self, key: str, value: RawCompletion) -> None:
        with self._lock:
            self._memory[key] = value
            db = self._db()
            if db is not None:
                db.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", (key, value.model_dump_json()))
                db.commit()

    def __len__(self) -> int:
        with self._lock:
            db = self._db()
            if db is None:
                return len(self._memory)
            return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
