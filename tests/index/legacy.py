"""Indexes as older tanglerag versions wrote them, made from a current one (tests of loading them)."""

import json
import sqlite3
from pathlib import Path

from tanglerag.index.passage_store import PassageStore


def as_format_2(folder: Path) -> None:
    """Rewrite the current version's passages as ``passages.jsonl`` (formats 1 and 2) and say format 2."""
    manifest = json.loads((folder / "manifest.json").read_text())
    data = folder / manifest["data"]
    store = PassageStore(data / "passages.sqlite3")
    (data / "passages.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in store))
    store.close()
    (data / "passages.sqlite3").unlink()
    (folder / "manifest.json").write_text(json.dumps(manifest | {"format_version": 2}))


def as_previous_release(folder: Path) -> None:
    """Drop the passage store's ``doc_id`` column and its index: the store as releases before issue 49 wrote it
    (a chunk's document known only from its ``source_id``/``chunk`` metadata)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    db = sqlite3.connect(folder / manifest["data"] / "passages.sqlite3")
    if any(row[1] == "doc_id" for row in db.execute("PRAGMA table_info(passages)")):  # a release before: as it is
        db.execute("DROP INDEX passages_doc")
        db.execute("ALTER TABLE passages DROP COLUMN doc_id")
        db.commit()
    db.close()
