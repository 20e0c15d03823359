"""The manifest written beside every index: what built it and how to read it back."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from tanglerag.config import IndexConfig

FORMAT_VERSION = 3
"""3: passages in SQLite (``passages.sqlite3``), read on demand; its rows name their document (``doc_id``) since
issue 49, and a store from before is read by its chunks' marks (the column is added when the next save writes a new
version; a release before reads either, ignoring the column). 2: the folder may also hold CDIT's trim log and
judged-query memory; passages in ``passages.jsonl``. Versions 1 and 2 load as they are (``READABLE``); a version
this code does not know is refused."""
READABLE = frozenset({1, 2, 3})


class IndexManifest(BaseModel):
    format_version: int = FORMAT_VERSION
    embedding_model: str
    dimension: int
    index_type: str
    count: int
    bm25: bool
    config: IndexConfig
    updated_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    data: str = Field("", description="sub-folder holding this version's files; '' = the index folder itself "
                                      "(indexes written before versioned saves)")
