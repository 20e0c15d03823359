"""``index FOLDER --sync``: make an index hold what a folder of files holds now, reading only the files that changed.

Each document read from a file keeps the sha256 of the file's bytes in its metadata. A sync hashes every file in the
folder (cheap next to parsing a PDF or embedding its text), compares with the stored hashes, and then, in one new
version written as ``--add --replace`` writes one (crash-safe: a kill leaves the old index or the new, never a mix):
a new or changed file is read and its document replaced, a file no longer there has its document removed, and an
unchanged file is neither read nor embedded. Documents that did not come from files (JSONL records, PUT bodies) are
left alone; a document from a file is one of the folder's, so syncing a second folder into the same index removes
the first one's files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import IngestError
from tanglerag.index.documents import DocumentChanges
from tanglerag.index.extend import Progress, add_streaming
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.passage_store import PassageStore
from tanglerag.ingest import folder_files, read_folder_files, stream_chunks, warnings_once
from tanglerag.types import Passage


@dataclass
class SyncPlan:
    """What a sync of ``folder`` does: files by their id (the path relative to the folder)."""

    files: dict[str, Path]
    changed: list[str] = field(default_factory=list)  # new or edited: read, embedded, replacing any stored version
    deleted: list[str] = field(default_factory=list)  # stored documents whose file is gone
    unchanged: int = 0

    def summary(self) -> str:
        return (f"{len(self.files)} files: {len(self.changed)} new or changed, {len(self.deleted)} deleted, "
                f"{self.unchanged} unchanged")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def plan_sync(folder: Path, stored: Mapping[str, str]) -> SyncPlan:
    """Compare the folder's files with ``stored`` (document id -> sha256 of the file indexed)."""
    if not folder.exists():
        raise IngestError(f"--sync needs a folder: {folder} does not exist")
    if not folder.is_dir():
        raise IngestError(f"--sync needs a folder: {folder} is a file (index it without --sync)")
    files = {path.relative_to(folder).as_posix(): path for path in folder_files(folder)}
    plan = SyncPlan(files)
    for doc, path in files.items():
        if stored.get(doc) == file_sha256(path):
            plan.unchanged += 1
        else:
            plan.changed.append(doc)
    plan.deleted = sorted(set(stored) - set(files))
    return plan


def stored_file_hashes(index: PassageIndex) -> dict[str, str]:
    """Document id -> file sha256 of every document the index read from a file."""
    if isinstance(index.passages, PassageStore):
        return index.passages.file_hashes()
    return {doc: str(parts[0].metadata.get("sha256") or "") for doc, parts in index.documents().items()
            if parts and parts[0].metadata.get("path") is not None}


def sync_folder(out: Path, folder: Path, embedder: TextEmbedder, config: IndexConfig, *,
                chunks: Callable[[Iterator[Passage]], Iterator[Passage]] | None = None,
                progress: Progress | None = None, expect: Progress | None = None,
                on_plan: Callable[[SyncPlan], int] | None = None,
                check: Callable[[PassageIndex], None] | None = None) -> tuple[PassageIndex | None, SyncPlan,
                                                                              DocumentChanges]:
    """Sync the index in ``out`` with ``folder`` (building it when there is none). ``chunks`` chunks the changed
    files' documents (default: ``stream_chunks`` at ``config``'s sizes); ``on_plan`` hears the plan before anything is
    read, ``expect`` how many passages ``progress`` will count (``add_streaming``). Returns the index (None when
    nothing changed and nothing was written), the plan and what changed."""
    def chunked(documents: Iterator[Passage]) -> Iterator[Passage]:
        if chunks is not None:
            return chunks(documents)
        return stream_chunks(documents, str(folder), chunk_size=config.chunk_words, chunk_overlap=config.chunk_overlap)

    plans: list[SyncPlan] = []

    def drop(index: PassageIndex) -> list[str]:  # under the index lock: the stored hashes cannot move under us
        plans.append(plan_sync(folder, stored_file_hashes(index)))
        if on_plan is not None:
            on_plan(plans[-1])
        return plans[-1].deleted

    def read() -> Iterator[Passage]:
        plan = plans[-1] if plans else plan_sync(folder, {})
        return chunked(read_folder_files(folder, [plan.files[doc] for doc in plan.changed]))

    if not (out / "manifest.json").exists():
        plans.append(plan_sync(folder, {}))
        if on_plan is not None:
            on_plan(plans[-1])
    else:
        with_nothing = _nothing_to_do(out, folder, embedder, on_plan)
        if with_nothing is not None:
            return None, with_nothing, DocumentChanges(unchanged=with_nothing.unchanged)
        plans.clear()
    with warnings_once():  # the changed files are read twice (plan, write): a bad one is still one warning
        index, changes = add_streaming(out, read, embedder, config, replace=True, progress=progress, check=check,
                                       drop=drop, expect=expect)
    return index, plans[-1], changes


def _nothing_to_do(out: Path, folder: Path, embedder: TextEmbedder,
                   on_plan: Callable[[SyncPlan], int] | None) -> SyncPlan | None:
    """The plan when the folder matches the index (no version is written then), else None."""
    index = PassageIndex.load(out, embedder)
    plan = plan_sync(folder, stored_file_hashes(index))
    if plan.changed or plan.deleted:
        return None
    if on_plan is not None:
        on_plan(plan)
    return plan
