"""What an index folder holds, read straight from the passage store of the version its manifest names: tests that
check what a write kept (or refused to touch) look past the index's own loading code."""

from __future__ import annotations

import json
from pathlib import Path

from tanglerag.index.passage_store import PassageStore
from tanglerag.types import Passage


def stored_passages(folder: Path) -> list[Passage]:
    data = json.loads((folder / "manifest.json").read_text())["data"]
    store = PassageStore(folder / data / "passages.sqlite3")
    try:
        return list(store)
    finally:
        store.close()
