"""The manifest written beside every index: what built it and how to read it back."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder, embedder_identity, settings_making
from tanglerag.errors import IndexStoreError

FORMAT_VERSION = 3
"""3: passages in SQLite (``passages.sqlite3``), read on demand; its rows name their document (``doc_id``) since
issue 49, and a store from before is read by its chunks' marks (the column is added when the next save writes a new
version; a release before reads either, ignoring the column). 2: the folder may also hold CDIT's trim log and
judged-query memory; passages in ``passages.jsonl``. Versions 1 and 2 load as they are (``READABLE``); a version
this code does not know is refused."""
READABLE = frozenset({1, 2, 3})


class IndexManifest(BaseModel):
    format_version: int = FORMAT_VERSION
    embedding_model: str = Field(description="the identity of the embedder that made the vectors "
                                             "(embeddings.embedder_identity): the model's name, with the backend's "
                                             "where its vectors differ (all-MiniLM-L6-v2-onnx-int8)")
    dimension: int
    index_type: str
    count: int
    bm25: bool
    config: IndexConfig
    updated_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    data: str = Field("", description="sub-folder holding this version's files; '' = the index folder itself "
                                      "(indexes written before versioned saves)")


def check_embedder(manifest: IndexManifest, embedder: TextEmbedder, folder: Path) -> None:
    """Refuse, in one line, to search an index with vectors of another embedder: the scores would be silently
    meaningless (an index of sentence-transformers' fp32 MiniLM opened by the onnx int8 one). Reads nothing."""
    identity = embedder_identity(embedder)
    if manifest.embedding_model != identity:
        raise IndexStoreError(
            f"index {folder} was built with embedding model {manifest.embedding_model!r} but the configured embedder "
            f"is {identity!r}: rebuild it with `tanglerag index`, or read it as it was built with "
            f"{settings_making(manifest.embedding_model)}")


def fingerprint(folder: Path) -> dict[str, str | int]:
    """What an eval run records of the index it retrieves from, read from ``manifest.json`` alone (cheap at any
    size): the version folder the manifest names, new on every save (add, replace, remove), and a digest of the
    manifest itself, which also tells apart indexes of the layout before versions. Passages are not read."""
    path = folder / "manifest.json"
    try:
        raw = path.read_bytes()
        manifest = IndexManifest.model_validate_json(raw)
    except FileNotFoundError:
        raise IndexStoreError(f"{folder} is not a tanglerag index (no manifest.json); build one with "
                              "`tanglerag index`") from None
    except (OSError, ValidationError) as exc:
        raise IndexStoreError(f"{path} cannot be read as an index manifest ({type(exc).__name__}); "
                              "rebuild the index with `tanglerag index`") from exc
    return {"version": manifest.data or "(files beside the manifest)", "passages": manifest.count,
            "saved": manifest.updated_at, "digest": hashlib.sha256(raw).hexdigest()[:16]}
