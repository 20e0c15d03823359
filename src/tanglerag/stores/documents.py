"""A store's collection kept in step with its documents, as the embedded index is kept (``index --store ...``).

- A document written again replaces all of its chunks: its new chunks are written and the chunks it no longer has
  deleted (an edit from 15 chunks down to 1 leaves 1), as one change where the store has one (``replace``: a
  PostgreSQL transaction, one Qdrant request, one LanceDB commit), so a reader sees it as it was or as it is, also
  when the writer is killed midway. A store without one (Chroma) writes, then deletes: a kill between the two
  leaves the new chunks beside some old ones until the next write of that document; never a document with none.
  Documents go in batches of whole documents (``index.extend.document_batches``), a batch one change.
- ``--remove IDS`` deletes documents (all of their chunks) by id; an id the collection does not hold is refused.
- ``--sync FOLDER``: files new or changed since they were written (by content hash) are written, files deleted from
  the folder are removed, unchanged ones are not read.

What was written from where is read from the collection itself (each passage's document and file hash, through the
contract's ``scan``), not from a file beside it: two machines syncing one collection see the same thing. A failure
leaves every batch before it written whole and none of the batch that failed; running the command again rewrites
what was written and adds the rest (passages are keyed by id: nothing is duplicated).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.index.documents import document_of
from tanglerag.index.extend import document_batches
from tanglerag.index.passage_index import embed_text
from tanglerag.index.sync import SyncPlan, plan_sync
from tanglerag.stores.base import VectorStore
from tanglerag.stores.factory import check_dimension
from tanglerag.types import Passage

BATCH = 256
"""Passages embedded and written at a time: a request of a few MB to a server, a few seconds of embedding."""


@dataclass
class HeldDocument:
    """A document as the collection holds it: its passages' ids and, when it was read from a file, that file's
    sha256."""

    passages: list[str] = field(default_factory=list)
    sha256: str | None = None


def held_documents(store: VectorStore) -> dict[str, HeldDocument]:
    """Every document the collection holds, by document id."""
    held: dict[str, HeldDocument] = defaultdict(HeldDocument)
    for passage_id, metadata in store.scan():
        document = held[document_of(passage_id, metadata)]
        document.passages.append(passage_id)
        if metadata.get("path") is not None and isinstance(metadata.get("sha256"), str):
            document.sha256 = metadata["sha256"]
    return dict(held)


def remove_documents(store: VectorStore, doc_ids: list[str]) -> int:
    """Delete these documents, all of their chunks; returns how many passages went. Unknown ids are refused before
    anything is deleted."""
    held = held_documents(store)
    missing = [doc for doc in doc_ids if doc not in held]
    if missing:
        raise InputError(f"the collection holds no document {missing[0]!r}" + (
            f" (nor {len(missing) - 1} more of those given)" if len(missing) > 1 else "") + "; nothing was removed")
    gone = [pid for doc in doc_ids for pid in held[doc].passages]
    store.delete(gone)
    return len(gone)


@dataclass(frozen=True)
class Written:
    """What a write did: passages written, and stale chunks of the written documents deleted after them."""

    written: int
    stale: int


def write_documents(store: VectorStore, passages: Iterable[Passage], embedder: TextEmbedder, collection: str, *,
                    progress: Callable[[int], None] | None = None,
                    held: dict[str, HeldDocument] | None = None) -> Written:
    """Write ``passages`` (upserts by id), then delete the chunks their documents held before and no longer have;
    ``held``: what the collection holds, when the caller has read it already (one scan, not two)."""
    held = held_documents(store) if held is None else held
    check_dimension(store, embedder, collection)
    written = stale_count = 0
    for batch in document_batches(passages, BATCH):
        fresh: dict[str, set[str]] = defaultdict(set)
        for passage in batch:
            fresh[document_of(passage.id, passage.metadata)].add(passage.id)
        stale = [pid for doc, ids in fresh.items() if doc in held for pid in held[doc].passages if pid not in ids]
        replace(store, batch, embedder.embed([embed_text(p) for p in batch]), stale)
        written, stale_count = written + len(batch), stale_count + len(stale)
        if progress is not None:
            progress(len(batch))
    return Written(written, stale_count)


def replace(store: VectorStore, passages: list[Passage], vectors: np.ndarray, stale: list[str]) -> None:
    """Write ``passages`` and delete ``stale`` as one change when the store offers one (its ``replace``), else the
    write, then the deletion."""
    whole = getattr(store, "replace", None)
    if whole is not None:
        whole(passages, vectors, stale)
        return
    store.upsert(passages, vectors)
    store.delete(stale)


def sync_store(store: VectorStore, folder: Path, read: Callable[[list[Path]], Iterator[Passage]],
               embedder: TextEmbedder, collection: str, *,
               progress: Callable[[int], None] | None = None) -> tuple[SyncPlan, Written, int]:
    """Make the collection hold ``folder``'s files as they are now; ``read`` chunks the given files. Returns the
    plan, what the write did and how many passages of deleted files were removed. Documents that came from no file
    (JSONL records) are left alone."""
    held = held_documents(store)
    plan = plan_sync(folder, {doc: d.sha256 for doc, d in held.items() if d.sha256 is not None})
    written = write_documents(store, read([plan.files[doc] for doc in plan.changed]), embedder, collection,
                              progress=progress, held=held) if plan.changed else Written(0, 0)
    gone = [pid for doc in plan.deleted for pid in held[doc].passages]
    store.delete(gone)
    return plan, written, len(gone)
