"""A passage collection searchable by dense vectors, BM25 or both.

Saving is crash-safe: each save writes a complete new version into a sub-folder of its own
(``data-<id>/``), then atomically replaces ``manifest.json``, which names the version to read. A kill
at any moment leaves the manifest pointing at a complete version, old or new; versions no manifest
points at are removed by the next save. A folder that is not a tanglerag index is never written into.
Writers of one folder take turns through ``index_lock``. A version holds ``passages.sqlite3`` (the passage store,
read on demand once loaded), ``dense.faiss`` and, with BM25, ``bm25/``.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Literal

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.errors import IndexStoreError, InputError
from tanglerag.fileio import atomic_write_text, file_lock, reporting_disk_full
from tanglerag.index.dense import build_dense, configure_search, read_dense
from tanglerag.index.documents import DocumentChanges, by_document, document_id, passages_of, plan_write
from tanglerag.index.fusion import reciprocal_rank_fusion
from tanglerag.index.hnsw_edit import RemovedLink, cut_links, restore_links
from tanglerag.index.manifest import READABLE, IndexManifest, check_embedder
from tanglerag.index.passage_store import FILE as PASSAGES_FILE
from tanglerag.index.passage_store import PassageStore
from tanglerag.index.sparse import BM25Index
from tanglerag.index.trim import TrimLog, TrimState, apply_separation
from tanglerag.types import Passage, RetrievedPassage
from tanglerag.where import Where

log = logging.getLogger(__name__)

SearchMode = Literal["dense", "bm25", "hybrid"]


class PassageIndex:
    def __init__(self, passages: Sequence[Passage], dense: faiss.Index, embedder: TextEmbedder, config: IndexConfig,
                 bm25: BM25Index | None = None) -> None:
        self.passages = passages  # a list when built or changed here; a PassageStore (SQLite, read on demand) when loaded
        self.dense = dense
        self.embedder = embedder
        self.config = config
        self.bm25 = bm25
        self._position_map: dict[str, int] | None = None
        self.folder: Path | None = None  # where it was loaded from or saved to (its trim log lives there)
        self.version = ""  # the saved version it holds (the manifest's ``data`` sub-folder; '' before a save)
        self.trim = TrimState()  # CDIT's separated pairs (from the folder's trim log when loaded)
        self._cuts: list[RemovedLink] = []  # HNSW links cut for them, put back before a save

    # -- construction -----------------------------------------------------------------
    @classmethod
    def build(cls, passages: list[Passage], embedder: TextEmbedder, config: IndexConfig, *,
              show_progress: bool = False) -> PassageIndex:
        if not passages:
            raise IndexStoreError("cannot build an index from an empty corpus")
        vectors = embedder.embed([embed_text(p) for p in passages], show_progress=show_progress)
        bm25 = BM25Index.build([embed_text(p) for p in passages]) if config.bm25 else None
        return cls(list(passages), build_dense(vectors, config), embedder, config, bm25)

    def add(self, passages: list[Passage], *, replace: bool = False, show_progress: bool = False) -> DocumentChanges:
        """Add documents' passages: identical ones are skipped, changed ones replaced when ``replace`` (else
        ``DocumentConflict``, and nothing changes)."""
        current = list(self.passages)  # a writer holds every passage (streaming writes are a later step)
        plan = plan_write(self.documents(current), passages, replace=replace)
        if plan.stale:  # replaced documents: one rebuild without their old text, with the new
            self._rewrite([p for p in current if p.id not in plan.stale], plan.fresh, show_progress)
        elif plan.fresh:
            self.dense.add(self._embed(plan.fresh, show_progress))
            self.passages = current + plan.fresh
            if self.bm25 is not None:
                self.bm25 = BM25Index.build([embed_text(p) for p in self.passages])
        return plan.changes

    def documents(self, passages: Sequence[Passage] | None = None) -> dict[str, list[Passage]]:
        """Every passage (or ``passages``, this index's, in order) by the document it is stored under: the store's
        ``doc_id``; passages held in a list (built here, or formats 1-2) by the chunk marks they carry."""
        passages = self.passages if passages is None else passages
        stored = self.passages.document_ids() if isinstance(self.passages, PassageStore) else None
        return by_document(passages, stored)

    def heads(self, passages: Sequence[Passage]) -> dict[str, Passage]:
        """The head (first chunk) of each given passage's document, by passage id, for the passages that are not
        their document's head themselves: a later chunk's document says what it is and when in its head, which a
        search need not have found."""
        later = [p for p in passages if p.metadata.get("chunk", 0) != 0]
        if not later:
            return {}
        if isinstance(self.passages, PassageStore):
            owners = self.passages.owners(p.id for p in later)
            heads = self.passages.heads(owners.values())
            return {pid: heads[doc] for pid, doc in owners.items() if doc in heads}
        wanted = {p.id: f"{doc}#0" for p in later if (doc := document_id(p)) != p.id}  # a chunk's head: its source's #0
        positions = self._positions(set(wanted.values()))  # the cached id map, not a pass over every passage
        return {pid: self.passages[positions[head]] for pid, head in wanted.items() if head in positions}

    @property
    def damage(self) -> str | None:
        """Why the stored passages can no longer be read (a read met a damaged page since loading), or None."""
        return self.passages.damage if isinstance(self.passages, PassageStore) else None

    def remove(self, passage_ids: set[str]) -> int:
        """Drop these passages for real in every index type: the dense index is rebuilt from the stored vectors
        (nothing is embedded again) and BM25 from the texts; CDIT's separations still apply."""
        keep = [p for p in self.passages if p.id not in passage_ids]
        removed = len(self.passages) - len(keep)
        if not removed:
            return 0
        if not keep:
            raise IndexStoreError("that would remove every passage and leave an empty index; build a new one instead")
        self._rewrite(keep, [], show_progress=False)
        return removed

    def _rewrite(self, keep: list[Passage], fresh: list[Passage], show_progress: bool) -> None:
        """Rebuild from ``keep``'s stored vectors and ``fresh``'s new ones (a faiss index cannot drop entries in
        every type, so removal is a rebuild); HNSW cuts and positions start over, the trim is re-applied."""
        vectors = np.vstack([self.vectors([p.id for p in keep]), self._embed(fresh, show_progress)])
        self.passages, self.dense = keep + fresh, build_dense(vectors, self.config)
        self._position_map, self._cuts = None, []
        if self.bm25 is not None:
            self.bm25 = BM25Index.build([embed_text(p) for p in self.passages])
        self.apply_trim(self.trim)

    def _embed(self, passages: list[Passage], show_progress: bool) -> np.ndarray:
        if not passages:
            return np.zeros((0, self.dense.d), dtype="float32")
        return self.embedded([embed_text(p) for p in passages], show_progress=show_progress)

    def embedded(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        """``texts`` embedded to search or join this index, refused in one line when the vectors are not of the
        index's size (an embedder of the same name and another dimension), where faiss would fail on an assertion.
        Checked where vectors meet the index rather than when it opens: a BM25 search loads no model."""
        vectors = self.embedder.embed(texts, show_progress=show_progress)
        if vectors.shape[1] != self.dense.d:
            raise IndexStoreError(f"index {self.folder or '(not saved)'} holds vectors of {self.dense.d} dimensions "
                                  f"but the embedder {embedder_identity(self.embedder)!r} makes {vectors.shape[1]}: "
                                  "rebuild it with `tanglerag index`")
        return vectors

    # -- CDIT trimming ------------------------------------------------------------------
    def apply_trim(self, state: TrimState) -> int:
        """Use ``state``'s separated pairs from now on; in an HNSW index also cut their links (the paper's
        mechanism). Returns how many links were cut now."""
        self.trim = state
        if not isinstance(self.dense, faiss.IndexHNSW) or not state.separated:
            return 0
        positions = self._positions({pid for pair in state.separated for pid in pair})
        pairs = [(positions[a], positions[b]) for a, b in sorted(state.separated) if a in positions and b in positions]
        cut = cut_links(self.dense, pairs)
        self._cuts += cut
        return len(cut)

    @property
    def cut_link_count(self) -> int:
        """Directed HNSW links cut for the trim log now (0 for flat and IVF, which use the table alone)."""
        return len(self._cuts)

    def _positions(self, ids: set[str] | list[str]) -> dict[str, int]:
        """Index positions of these ids (ids not held are left out): the store's id index, or a map of the list."""
        if isinstance(self.passages, PassageStore):
            return self.passages.positions(ids)
        if self._position_map is None or len(self._position_map) != len(self.passages):
            self._position_map = {p.id: i for i, p in enumerate(self.passages)}
        return {pid: self._position_map[pid] for pid in ids if pid in self._position_map}

    # -- search -------------------------------------------------------------------------
    def search(self, query: str, k: int, mode: SearchMode = "dense", rrf_k: int = 60,
               where: Where | None = None) -> list[RetrievedPassage]:
        """The top ``k`` passages for ``query``; with ``where``, the top ``k`` of those whose metadata passes it."""
        return self.search_trimmed(query, k, mode, rrf_k, where)[0]

    def search_trimmed(self, query: str, k: int, mode: SearchMode = "dense", rrf_k: int = 60,
                       where: Where | None = None) -> tuple[list[RetrievedPassage], list[tuple[str, str]]]:
        """Top-k with no two separated passages, and the (dropped, kept) pairs the separation table decided."""
        if not self.trim.separated:
            return self._search(query, k, mode, rrf_k, where), []
        wider = self._search(query, min(len(self.passages), 3 * k), mode, rrf_k, where)
        return apply_separation(wider, self.trim, k)

    def search_untrimmed(self, query: str, k: int, mode: SearchMode = "dense", rrf_k: int = 60) -> list[RetrievedPassage]:
        """Top-k without the separation table (an HNSW graph's cut links still steer it): what trimming does to
        the index structure alone, for measurements."""
        return self._search(query, k, mode, rrf_k)

    def _search(self, query: str, k: int, mode: SearchMode, rrf_k: int,
                where: Where | None = None) -> list[RetrievedPassage]:
        if not query.strip():
            raise InputError("query is empty")
        k = min(k, len(self.passages))
        hits = self._ranked(query, k, mode, rrf_k) if where is None else self._ranked_where(query, k, mode, rrf_k,
                                                                                            where)
        return [RetrievedPassage(passage=self.passages[i], score=score, rank=rank)
                for rank, (i, score) in enumerate(hits, 1)]

    def _ranked(self, query: str, k: int, mode: SearchMode, rrf_k: int) -> list[tuple[int, float]]:
        """(position, score) of the top ``k`` in the ``mode``'s ranking."""
        if mode == "dense":
            return self._dense_search(query, k)
        if mode == "bm25":
            return self._bm25_search(query, k)
        depth = min(len(self.passages), max(k * 4, 20))
        dense = [i for i, _ in self._dense_search(query, depth)]
        sparse = [i for i, _ in self._bm25_search(query, depth)]
        return reciprocal_rank_fusion([dense, sparse], rrf_k)[:k]

    def _ranked_where(self, query: str, k: int, mode: SearchMode, rrf_k: int, where: Where) -> list[tuple[int, float]]:
        """The top ``k`` of the ranking among the passages ``where`` lets through. The ranking is read deeper, four
        times each round, until ``k`` pass or the whole index was ranked, so every index type and mode scores as it
        does unfiltered and the filter only decides which passages are shown. Only candidates' metadata is read
        (from the store, by position): the filter runs in Python on typed values, never as SQL. An IVF index ranks
        the lists it probes (``index.ivf_nprobe``), so a match outside them is not found, filtered or not."""
        passed: dict[int, bool] = {}
        depth = min(len(self.passages), max(4 * k, 64))
        while True:
            hits = self._ranked(query, depth, mode, rrf_k)
            self._judge([i for i, _ in hits if i not in passed], where, passed)
            kept = [(i, score) for i, score in hits if passed[i]]
            if len(kept) >= k or depth >= len(self.passages):
                return kept[:k]
            depth = min(len(self.passages), depth * 4)

    def _judge(self, positions: list[int], where: Where, passed: dict[int, bool]) -> None:
        """Record in ``passed`` whether each of these positions' metadata passes ``where``."""
        if isinstance(self.passages, PassageStore):
            metadata = self.passages.metadata_at(positions)
        else:
            metadata = {i: self.passages[i].metadata for i in positions}
        passed.update((i, where.matches(metadata.get(i, {}))) for i in positions)

    def _dense_search(self, query: str, k: int) -> list[tuple[int, float]]:
        scores, ids = self.dense.search(self.embedded([query]), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def _bm25_search(self, query: str, k: int) -> list[tuple[int, float]]:
        if self.bm25 is None:
            raise IndexStoreError("this index has no BM25 part: rebuild it with --bm25")
        return self.bm25.search(query, k)

    def vectors(self, passage_ids: list[str]) -> np.ndarray:
        """The stored vectors of these passages (no re-embedding), one row each, in the given order."""
        positions = self._positions(passage_ids)
        missing = [pid for pid in passage_ids if pid not in positions]
        if missing:
            raise IndexStoreError(f"passages not in this index: {', '.join(missing[:5])}")
        return self.vectors_at([positions[pid] for pid in passage_ids])

    def vectors_at(self, positions: Sequence[int]) -> np.ndarray:
        """The stored vectors at these index positions, one row each, in the given order."""
        if not positions:
            return np.zeros((0, self.dense.d), dtype="float32")
        if isinstance(self.dense, faiss.IndexIVF) and self.dense.direct_map.type == faiss.DirectMap.NoMap:  # type: ignore[attr-defined]  # SWIG attribute
            self.dense.make_direct_map()  # IVF lists do not map ids to vectors until asked; built once
        return np.stack([self.dense.reconstruct(int(i)) for i in positions]).astype("float32")

    # -- persistence ----------------------------------------------------------------------
    def manifest(self) -> IndexManifest:
        return IndexManifest(embedding_model=embedder_identity(self.embedder), dimension=self.dense.d,
                             index_type=self.config.index_type, count=len(self.passages),
                             bm25=self.bm25 is not None, config=self.config)

    def save(self, folder: Path) -> None:
        data = write_version(folder, self._write_version)
        self.version = data.name
        if isinstance(self.passages, PassageStore):  # read from the version just written; the old one is swept
            old, self.passages = self.passages, PassageStore(data / PASSAGES_FILE)
            old.close()
        self.folder = folder.resolve()

    def _write_version(self, data: Path) -> IndexManifest:
        PassageStore.write(data / PASSAGES_FILE, self.passages)
        with faiss_disk_errors():
            self.write_dense(data / "dense.faiss")
        if self.bm25 is not None:
            (data / "bm25").mkdir()
            self.bm25.save(data / "bm25")
        return self.manifest()

    def write_dense(self, path: Path) -> None:
        """The graph is saved without CDIT's cuts: the trim log re-applies them on load, so undo is complete."""
        if not self._cuts:
            faiss.write_index(self.dense, str(path))
            return
        restore_links(self.dense, self._cuts)
        try:
            faiss.write_index(self.dense, str(path))
        finally:
            self._cuts = cut_links(self.dense, sorted({(min(c.source, c.target), max(c.source, c.target)) for c in self._cuts}))

    @classmethod
    def load(cls, folder: Path, embedder: TextEmbedder, *, mmap: bool = False) -> PassageIndex:
        """``mmap``: search the saved vectors memory-mapped (read-only: writers load the index whole)."""
        manifest = read_manifest(folder)
        files = folder / manifest.data if manifest.data else folder
        check_embedder(manifest, embedder, folder)
        rebuild = "rebuild it with `tanglerag index`"
        passages = _read_passages(files, manifest.format_version, rebuild, verify=not mmap)
        try:
            dense = read_dense(files / "dense.faiss", mmap)
        except RuntimeError as exc:  # faiss reports a missing or truncated file as a bare RuntimeError
            raise IndexStoreError(f"{files / 'dense.faiss'} is missing or damaged; {rebuild}") from exc
        if dense.ntotal != len(passages) or len(passages) != manifest.count:
            raise IndexStoreError(f"index {folder} is inconsistent: manifest says {manifest.count} passages, "
                                  f"store has {len(passages)}, vectors {dense.ntotal}; {rebuild}")
        if dense.d != manifest.dimension or _index_type(dense) != manifest.index_type:
            raise IndexStoreError(f"index {folder} is inconsistent: manifest says {manifest.index_type} of dimension "
                                  f"{manifest.dimension}, dense.faiss holds {_index_type(dense)} of {dense.d}; "
                                  f"{rebuild}")
        configure_search(dense, manifest.config)
        bm25 = None
        if manifest.bm25:
            try:
                bm25 = BM25Index.load(files / "bm25", mmap=mmap)
            except (OSError, ValueError) as exc:
                raise IndexStoreError(f"{files / 'bm25'} is missing or damaged ({_first_line(exc)}); "
                                      f"{rebuild}") from exc
        index = cls(passages, dense, embedder, manifest.config, bm25)
        index.folder, index.version = folder, manifest.data
        index.apply_trim(TrimLog(folder).state())
        return index


def _read_passages(files: Path, format_version: int, rebuild: str, *, verify: bool) -> Sequence[Passage]:
    """The version's passage store, checked page by page when ``verify`` (off with ``index.mmap``, which is for
    corpora too large to read whole: damage is then found by the first read that meets it); versions before
    format 3 kept passages in JSON lines, read whole."""
    path = files / (PASSAGES_FILE if format_version >= 3 else "passages.jsonl")
    try:
        if format_version >= 3:
            return PassageStore(path, verify=verify)  # a missing file fails to open as a DatabaseError
        return [Passage.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, ValueError, sqlite3.DatabaseError) as exc:
        raise IndexStoreError(f"{path} is missing or damaged ({_first_line(exc)}); {rebuild}") from exc


def read_manifest(folder: Path) -> IndexManifest:
    path = folder / "manifest.json"
    if not path.exists():
        raise IndexStoreError(f"{folder} is not a tanglerag index (no manifest.json); build one with `tanglerag index`")
    try:
        manifest = IndexManifest.model_validate(json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise IndexStoreError(f"{path} is corrupt: {exc}") from exc
    if manifest.format_version not in READABLE:
        raise IndexStoreError(f"index {folder} has format version {manifest.format_version}; this tanglerag reads "
                              f"{', '.join(map(str, sorted(READABLE)))}. Upgrade tanglerag or rebuild the index.")
    return manifest


def _index_type(index: faiss.Index) -> str:
    if isinstance(index, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(index, faiss.IndexIVFPQ | faiss.IndexRefine):
        return "ivfpq"
    return "ivf" if isinstance(index, faiss.IndexIVF) else "flat"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def index_lock(folder: Path) -> AbstractContextManager[None]:
    """The lock writers of ``folder`` hold from reading the index to saving it (a sibling file: the folder
    may not exist yet, and a lock inside it would be swept away with a version)."""
    folder = folder.resolve()
    return file_lock(folder.with_name(f".{folder.name}.lock"))


def store_passages(folder: Path, passages: list[Passage], embedder: TextEmbedder, config: IndexConfig, *,
                   add: bool = True, replace: bool = False, show_progress: bool = False,
                   check: Callable[[PassageIndex], None] | None = None) -> tuple[PassageIndex, DocumentChanges]:
    """Add ``passages`` to the index in ``folder`` (or build one there) and save it; returns it and what changed.

    Holds ``index_lock`` from reading to saving, so a concurrent writer's passages are read, not lost.
    ``check`` may refuse the existing index (e.g. settings that ``add`` would ignore). A changed document under
    a known id is a ``DocumentConflict`` unless ``replace``; a refusal leaves the stored index as it was.
    """
    with index_lock(folder):
        check_index_target(folder.resolve())  # before any embedding: a refusal should not cost the corpus's time
        if add and (folder / "manifest.json").exists():
            index = PassageIndex.load(folder, embedder)
            if check is not None:
                check(index)
            changes = index.add(passages, replace=replace, show_progress=show_progress)
        else:
            index = PassageIndex.build(passages, embedder, config, show_progress=show_progress)
            changes = DocumentChanges(added=len(passages))
        index.save(folder)
    return index, changes


def remove_documents(folder: Path, doc_ids: list[str], embedder: TextEmbedder) -> tuple[PassageIndex, DocumentChanges]:
    """Remove these documents (all their chunks) from the index in ``folder`` and save it, crash-safe like any
    save; ``UnknownDocuments`` names ids it does not hold, and then nothing is removed."""
    with index_lock(folder):
        index = PassageIndex.load(folder, embedder)
        removed = index.remove(passages_of(index.documents(), doc_ids))
        index.save(folder)
    return index, DocumentChanges(removed=removed, removed_documents=list(doc_ids))


def check_index_target(folder: Path) -> None:
    """Refuse to write an index into a file or into a folder holding anything but an index of ours.

    A folder with no manifest but only our unfinished versions (``data-*``, a temporary manifest) is a first
    build killed before it finished: it is ours, and the next save sweeps those leftovers away.
    """
    if not folder.exists() or (folder / "manifest.json").exists():
        return
    if folder.is_dir() and all(p.name.startswith(_UNFINISHED) for p in folder.iterdir()):
        return
    raise IndexStoreError(f"{folder} exists and is not a tanglerag index; refusing to write an index into it "
                          "(choose a new or empty folder)")


def write_version(folder: Path, fill: Callable[[Path], IndexManifest]) -> Path:
    """Write a complete new version of the index in ``folder``: ``fill`` writes its files into a fresh ``data-*``
    sub-folder and returns its manifest, which then replaces the old one atomically; the old version is swept.
    A kill at any moment leaves the manifest naming a complete version. Returns the new version's folder."""
    folder = folder.resolve()
    check_index_target(folder)
    with reporting_disk_full(folder):
        folder.mkdir(parents=True, exist_ok=True)
        data = Path(tempfile.mkdtemp(prefix="data-", dir=folder))
        try:
            manifest = fill(data).model_copy(update={"data": data.name})
            _fsync_tree(data)
            atomic_write_text(folder / "manifest.json", manifest.model_dump_json(indent=2))
        except BaseException:
            shutil.rmtree(data, ignore_errors=True)
            raise
    _remove_unreferenced(folder, data.name)
    return data


@contextmanager
def faiss_disk_errors() -> Iterator[None]:
    """faiss reports a failed write as a RuntimeError carrying strerror; a full disk becomes the OSError it is."""
    try:
        yield
    except RuntimeError as exc:
        if "No space left" in str(exc):
            raise OSError(errno.ENOSPC, "No space left on device") from exc
        raise


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with path.open("rb") as fh:
                os.fsync(fh.fileno())


_LEGACY = ("passages.jsonl", "dense.faiss", "bm25")
_UNFINISHED = ("data-", ".manifest.json.")  # a version being written, the manifest's temporary file


def _remove_unreferenced(folder: Path, current: str) -> None:
    """Versions (and files of the pre-version layout) that the manifest no longer names: a finished older
    save, or a save killed before its manifest was written."""
    for path in folder.iterdir():
        leftover = path.name.startswith(_UNFINISHED) or path.name in _LEGACY
        if path.name == current or not leftover:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def embed_text(passage: Passage) -> str:
    """The text a passage is embedded and BM25-indexed as (its title leads when it has one)."""
    return f"{passage.title}: {passage.text}" if passage.title else passage.text
