"""Add a stream of documents to a saved index, a batch at a time, in two passes over the incoming corpus.

The first pass needs no model: each batch of incoming documents is checked against the stored ones (looked up in
the passage store by id, never all loaded), so identical documents are skipped, a changed one is a
``DocumentConflict`` unless replacing -- refused before anything is embedded, as an in-memory add refuses -- and
the plan names the stored passages a replacement drops. The second pass writes a new version: the stored passages
are copied inside SQLite without the dropped ones, the vectors are kept (rebuilt from the stored ones only when a
replacement dropped some), and the new passages are embedded and appended batch by batch. Memory holds a batch of
new passages and the vector index, which every writer holds; a kill leaves the old version in use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import faiss

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder
from tanglerag.index.dense import build_dense
from tanglerag.index.documents import DocumentChanges, DocumentConflict, document_id, passages_of, plan_write
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import PassageIndex, embed_text, faiss_disk_errors, index_lock, write_version
from tanglerag.index.passage_store import FILE as PASSAGES_FILE
from tanglerag.index.passage_store import PassageStore, StoreWriter
from tanglerag.index.streaming import BATCH, write_bm25, write_new_version
from tanglerag.types import Passage

Progress = Callable[[int], None]


@dataclass
class AddPlan:
    """What adding the incoming documents will do (counted in the first pass)."""

    changes: DocumentChanges = field(default_factory=DocumentChanges)
    stale: set[str] = field(default_factory=set)  # stored passage ids whose documents are replaced
    conflicts: list[str] = field(default_factory=list)  # changed documents, refused unless replacing
    incoming: int = 0  # passages read, which the write pass reports to ``progress`` again


def plan_add(store: PassageStore, passages: Iterable[Passage], *, replace: bool, batch_size: int = BATCH) -> AddPlan:
    """Check every incoming document against the stored ones; ``DocumentConflict`` names all changed documents
    when not ``replace``."""
    plan = AddPlan()
    for batch in document_batches(passages, batch_size):
        step = plan_write(_stored_counterparts(store, batch), batch, replace=True)
        plan.changes.added += step.changes.added
        plan.changes.unchanged += step.changes.unchanged
        plan.conflicts += step.changes.replaced
        plan.stale |= step.stale
        plan.incoming += len(batch)
    if plan.conflicts and not replace:
        raise DocumentConflict(sorted(plan.conflicts))
    plan.changes.replaced = sorted(plan.conflicts)
    plan.changes.removed = len(plan.stale)
    return plan


Drop = Callable[[PassageIndex], list[str]]
"""Given the stored index (under the lock), the documents to remove in the same new version (``index --sync``)."""


def add_streaming(folder: Path, read: Callable[[], Iterator[Passage]], embedder: TextEmbedder, config: IndexConfig,
                  *, replace: bool = False, batch_size: int = BATCH, progress: Progress | None = None,
                  check: Callable[[PassageIndex], None] | None = None,
                  drop: Drop | None = None, expect: Progress | None = None) -> tuple[PassageIndex, DocumentChanges]:
    """Add the documents ``read()`` yields (called twice: plan, then write) to the index in ``folder``, or build
    one there under ``config``, and save it; ``check`` may refuse the stored index first, and ``drop`` names stored
    documents to remove in the same version (one atomic swap: a kill leaves the old index or the new, whole). Indexes
    saved before the passage store existed are added to in memory, as before.

    ``expect`` hears how many passages ``progress`` will count before the write pass starts, so a caller can say how
    long is left: the plan pass counts them anyway; a new index is counted in a pass of its own (reading without the
    model, as ``index`` counts its corpus), only when someone asks."""
    with index_lock(folder):
        if not (folder / "manifest.json").exists():
            if expect is not None:
                expect(sum(1 for _ in read()))
            write_new_version(folder, read(), embedder, config, batch_size, progress)
            index = PassageIndex.load(folder, embedder)
            return index, DocumentChanges(added=len(index.passages))
        changes = _extend_saved(folder, read, embedder, replace, batch_size, progress, check, drop, expect)
    return PassageIndex.load(folder, embedder), changes  # read once the old version's vectors are freed


def _extend_saved(folder: Path, read: Callable[[], Iterator[Passage]], embedder: TextEmbedder, replace: bool,
                  batch_size: int, progress: Progress | None,
                  check: Callable[[PassageIndex], None] | None, drop: Drop | None,
                  expect: Progress | None) -> DocumentChanges:
    index = PassageIndex.load(folder, embedder)
    if check is not None:
        check(index)
    dropped = drop(index) if drop is not None else []
    if not isinstance(index.passages, PassageStore):
        removed = index.remove(passages_of(index.documents(), dropped)) if dropped else 0
        changes = index.add(list(read()), replace=replace)
        index.save(folder)
        changes.removed += removed
        changes.removed_documents = dropped
        return changes
    plan = plan_add(index.passages, read(), replace=replace, batch_size=batch_size)
    if expect is not None:
        expect(plan.incoming)
    gone = {p.id for parts in index.passages.documents(dropped).values() for p in parts}
    store, stale = index.passages, plan.stale | gone
    write_version(folder, lambda data: _write(data, index, store, read(), stale, batch_size, progress))
    plan.changes.removed = len(stale)
    plan.changes.removed_documents = dropped
    return plan.changes


def document_batches(passages: Iterable[Passage], batch_size: int) -> Iterator[list[Passage]]:
    """Batches of about ``batch_size`` passages that never split a document's chunks (they arrive together)."""
    batch: list[Passage] = []
    for passage in passages:
        if len(batch) >= batch_size and document_id(passage) != document_id(batch[-1]):
            yield batch
            batch = []
        batch.append(passage)
    if batch:
        yield batch


def _stored_counterparts(store: PassageStore, batch: list[Passage]) -> dict[str, list[Passage]]:
    """The stored documents that ``plan_write`` compares ``batch`` with: its own, and any stored document holding
    one of its passage ids now (the store says which document a passage is, not the shape of its id)."""
    holders = store.owners(p.id for p in batch).values()
    return store.documents([*(document_id(p) for p in batch), *holders])


def _write(data: Path, index: PassageIndex, store: PassageStore, passages: Iterable[Passage], stale: set[str],
           batch_size: int, progress: Progress | None) -> IndexManifest:
    dense = _kept_vectors(index, store, stale)
    with StoreWriter(data / PASSAGES_FILE) as writer:
        writer.copy_from(store.path, stale)
        for batch in document_batches(passages, batch_size):
            stored = store.positions(p.id for p in batch)
            fresh = [p for p in batch if p.id not in stored or p.id in stale]
            if fresh:
                dense.add(index.embedded([embed_text(p) for p in fresh]))
                writer.append(fresh)
            if progress is not None:
                progress(len(batch))
        count = writer.count
    with faiss_disk_errors():
        if dense is index.dense:
            index.write_dense(data / "dense.faiss")  # CDIT's cut links are put back in the file, as in every save
        else:
            faiss.write_index(dense, str(data / "dense.faiss"))
    if index.bm25 is not None:
        write_bm25(data)
    return index.manifest().model_copy(update={"count": count})


def _kept_vectors(index: PassageIndex, store: PassageStore, stale: set[str]) -> faiss.Index:
    """The stored vector index to append to, or, when replaced documents drop passages, one rebuilt from the
    vectors of the passages kept (a faiss index cannot drop entries in every type; nothing is embedded again)."""
    if not stale:
        return index.dense
    dropped = set(store.positions(stale).values())
    return build_dense(index.vectors_at([i for i in range(len(store)) if i not in dropped]), index.config)
