"""Two-level cache of LLM calls: a bounded in-process LRU (cachetools) in front of a SQLite file
(``disk_store.SqliteTable``: atomic commits, so an interrupted evaluation keeps every call it finished and a re-run
resumes where it stopped; a damaged file moved aside, one that cannot be written still read). Keys hash everything
that can change an answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import MutableMapping
from pathlib import Path

from cachetools import LRUCache

from tanglerag.disk_store import SqliteTable
from tanglerag.llm.base import GenerationParams, RawCompletion
from tanglerag.trace import Message


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
        self._file = SqliteTable(path, "calls", "LLM cache") if path is not None else None

    def get(self, key: str) -> RawCompletion | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None or self._file is None:
                return hit
            stored = self._file.get(key)
            if stored is None:
                return None
            hit = RawCompletion.model_validate_json(str(stored))
            self._memory[key] = hit
            return hit

    def put(self, key: str, value: RawCompletion) -> None:
        with self._lock:
            self._memory[key] = value
            if self._file is not None:
                self._file.put_many([(key, value.model_dump_json())])
