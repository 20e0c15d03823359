"""Indexes as older tanglerag versions wrote them, made from a current one (tests of loading them)."""

import json
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
