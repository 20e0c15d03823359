"""``index FOLDER --sync``: make an index hold what a folder of files holds now, reading only the files that changed.

Each document read from a file keeps the sha256 of the file's bytes in its metadata. A sync hashes every file in the
folder (cheap next to parsing a PDF or embedding its text), compares with the stored hashes, and then, in one new
version written as ``--add --replace`` writes one (crash-safe: a kill leaves the old index or the new, never a mix):
a new or changed file is read and its document replaced, a file no longer there has its document removed, and an
unchanged file is neither read nor embedded. The comparison is made under the index's lock, so a sync that waited for
another writer (a second sync) plans against what that one wrote. Documents that did not come from files (JSONL
records, PUT bodies) are left alone, and a file whose path is such a document's id is refused rather than replacing
it; a document from a file is one of the folder's, so syncing a second folder into the same index removes the first
one's files. A file that cannot be read is skipped with one warning, and its indexed version, if any, stays.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import logging
import os
import stat
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
from tanglerag.loaders.folder import printable_name
from tanglerag.types import Passage

log = logging.getLogger(__name__)


@dataclass
class SyncPlan:
    """What a sync of ``folder`` does: files by their id (the path relative to the folder)."""

    files: dict[str, Path]
    changed: list[str] = field(default_factory=list)  # new or edited: read, embedded, replacing any stored version
    new: list[str] = field(default_factory=list)  # those of ``changed`` the index does not hold
    deleted: list[str] = field(default_factory=list)  # stored documents whose file is gone
    unreadable: list[str] = field(default_factory=list)  # files that could not be read: their stored version stays
    unchanged: int = 0

    def summary(self) -> str:
        counts = (f"{len(self.files)} files: {len(self.new)} new, {len(self.changed) - len(self.new)} changed, "
                  f"{len(self.deleted)} deleted, {self.unchanged} unchanged")
        if self.unreadable:
            counts += f", {len(self.unreadable)} unreadable"
        if not self.files and self.deleted:
            counts += ("; the folder holds no file: every document read from a file is removed, and documents that "
                       "came from no file (JSONL records, uploads) stay")
        return counts


def file_sha256(path: Path) -> str:
    """The sha256 of a regular file's bytes (opened without waiting: a FIFO swapped in since the folder was listed
    is an OSError, not a sync that hangs)."""
    digest = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def plan_sync(folder: Path, stored: Mapping[str, str]) -> SyncPlan:
    """Compare the folder's files with ``stored`` (document id -> sha256 of the file indexed); a file that cannot be
    read is warned about and left as it is stored, never taken for deleted."""
    if not folder.exists():
        raise IngestError(f"--sync needs a folder: {folder} does not exist")
    if not folder.is_dir():
        raise IngestError(f"--sync needs a folder: {folder} is a file (index it without --sync)")
    files = {path.relative_to(folder).as_posix(): path for path in folder_files(folder)}
    plan = SyncPlan(files)
    for doc, path in files.items():
        try:
            digest = file_sha256(path)
        except OSError as exc:
            kept = "; its indexed version stays" if doc in stored else ""
            log.warning("skipping %s: %s%s", printable_name(path), exc.strerror or exc, kept)
            plan.unreadable.append(doc)
            continue
        if stored.get(doc) == digest:
            plan.unchanged += 1
        else:
            plan.changed.append(doc)
    plan.new = [doc for doc in plan.changed if doc not in stored]
    missing = sorted(set(stored) - set(files))
    plan.deleted = [doc for doc in missing if not _left_out(folder / doc)]
    plan.unreadable += [doc for doc in missing if doc not in plan.deleted]
    return plan


def _left_out(path: Path) -> bool:
    """Whether a stored document's file is still there though the folder's listing left it out (refused with a
    warning of its own, or in a folder that cannot be read): then it is not deleted, and its indexed version stays."""
    try:
        info = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        log.warning("skipping %s: %s; its indexed version stays", printable_name(path), exc.strerror or exc)
        return True
    return not stat.S_ISDIR(info.st_mode)


def stored_file_hashes(index: PassageIndex) -> dict[str, str]:
    """Document id -> file sha256 of every document the index read from a file."""
    if isinstance(index.passages, PassageStore):
        return index.passages.file_hashes()
    return {doc: str(parts[0].metadata.get("sha256") or "") for doc, parts in index.documents().items()
            if parts and parts[0].metadata.get("path") is not None}


class _InStep(Exception):
    """Raised under the lock when the index already holds the folder as it is: nothing is written."""

    def __init__(self, plan: SyncPlan) -> None:
        super().__init__("nothing to sync")
        self.plan = plan


def sync_folder(out: Path, folder: Path, embedder: TextEmbedder, config: IndexConfig, *,
                chunks: Callable[[Iterator[Passage]], Iterator[Passage]] | None = None,
                progress: Progress | None = None, expect: Progress | None = None,
                on_plan: Callable[[SyncPlan], int] | None = None,
                check: Callable[[PassageIndex], None] | None = None) -> tuple[PassageIndex | None, SyncPlan,
                                                                              DocumentChanges]:
    """Sync the index in ``out`` with ``folder`` (building it when there is none). ``chunks`` chunks the changed
    files' documents (default: ``stream_chunks`` at ``config``'s sizes); ``on_plan`` hears the plan before anything is
    read, ``expect`` how many passages ``progress`` will count (``add_streaming``); ``check`` may refuse the stored
    index, whether or not anything changed. Returns the index (None when nothing changed and nothing was written),
    the plan and what changed."""
    def chunked(documents: Iterator[Passage]) -> Iterator[Passage]:
        if chunks is not None:
            return chunks(documents)
        return stream_chunks(documents, str(folder), chunk_size=config.chunk_words, chunk_overlap=config.chunk_overlap,
                             min_chunk_words=config.min_chunk_words)

    locked: list[SyncPlan] = []  # the plan made under the lock, against the index there (none for a new index)

    def drop(index: PassageIndex) -> list[str]:  # under the index lock: the stored hashes cannot move under us
        locked.append(plan_sync(folder, stored_file_hashes(index)))
        if on_plan is not None:
            on_plan(locked[0])
        if not locked[0].changed and not locked[0].deleted:
            raise _InStep(locked[0])
        _refuse_lost_documents(out, folder, index, locked[0])
        return locked[0].deleted

    def read() -> Iterator[Passage]:  # a new index of nothing is refused; a sync that only removes is a sync
        plan = locked[0] if locked else building
        documents = read_folder_files(folder, [plan.files[doc] for doc in plan.changed])
        return _chunked_if_any(documents, chunked) if locked else chunked(documents)

    with warnings_once():  # the folder is planned and the changed files read more than once: a bad file is one line
        new = not (out / "manifest.json").exists()
        building = plan_sync(folder, {}) if new else SyncPlan({})  # a new index's plan; else ``drop`` makes it
        if on_plan is not None and new:
            on_plan(building)
        try:
            index, changes = add_streaming(out, read, embedder, config, replace=True, progress=progress, check=check,
                                           drop=drop, expect=expect)
        except _InStep as done:
            return None, done.plan, DocumentChanges(unchanged=done.plan.unchanged)
    return index, (locked[0] if locked else building), changes


def _chunked_if_any(documents: Iterator[Passage],
                    chunked: Callable[[Iterator[Passage]], Iterator[Passage]]) -> Iterator[Passage]:
    """The documents' chunks, or nothing when no changed file could be read: a sync that only removes is a sync,
    not an empty corpus."""
    first = next(documents, None)
    return iter(()) if first is None else chunked(itertools.chain([first], documents))


def _documents(index: PassageIndex, ids: list[str]) -> dict[str, list[Passage]]:
    """Those of these documents the index holds (looked up by id in a passage store, never all loaded)."""
    if isinstance(index.passages, PassageStore):
        return index.passages.documents(ids)
    held = index.documents()
    return {doc: held[doc] for doc in ids if doc in held}


def _refuse_lost_documents(out: Path, folder: Path, index: PassageIndex, plan: SyncPlan) -> None:
    """Refuse a sync that would replace a document that came from no file (a JSONL record, an upload: a sync leaves
    those alone) with a file whose path is its id, or remove every passage and leave an empty index."""
    taken = sorted(_documents(index, plan.new))
    if taken:
        more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
        raise IngestError(f"document {taken[0]!r} did not come from a file, and the file {plan.files[taken[0]]} has "
                          f"its id{more}: --sync leaves such documents alone, so nothing was written; rename the file, "
                          f"or remove the document first (index --remove {taken[0]} --out {out})")
    if (sum(map(len, _documents(index, plan.deleted).values())) == len(index.passages)
            and next(read_folder_files(folder, [plan.files[doc] for doc in plan.changed]), None) is None):
        raise IngestError(f"{folder} holds no file that can be read now: the sync would remove every document of "
                          f"{out} and leave an empty index; remove {out} instead")
