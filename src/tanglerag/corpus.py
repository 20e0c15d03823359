"""Where a runtime's passages come from, as one object whichever it is: an index folder (``--index DIR``, the
embedded index, or an index handed in such as an evaluation's pooled passages) or a vector store
(``store.backend``).

Why one object: the runtime, the service and the evaluation each asked "is this a store?" before every use (twelve
branches in five files), and each new thing a corpus does meant a new branch in each. Here each kind answers for
itself: the retriever a question gets, what a read-only request sees, whether it is ready and why not, which folder
announces its versions. ``open_corpus`` is the one place the two are told apart, by the store's capability
(``index_folder``), never by a backend's name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import IndexStoreError, InputError
from tanglerag.family import retriever_factory
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import IndexRetriever, Retriever
from tanglerag.stages.store_retrieve import StoreRetriever
from tanglerag.stores.base import StoreError, VectorStore
from tanglerag.stores.factory import open_store
from tanglerag.stores.registry import capabilities, require
from tanglerag.types import Question, RetrievedPassage
from tanglerag.where import authority_tiers

Search = Callable[[str, int], list[RetrievedPassage]]
"""A question's text and a depth to the passages retrieved for it (an evaluation's questions without their own)."""


def refuse_where_with_user(settings: Settings) -> None:
    """The personal retriever ranks the whole index: a ``retrieval.where`` it would not apply is refused (for the
    CLI, the API and the service alike), not silently ignored."""
    if settings.retrieval.where:
        raise InputError("a where filter does not apply to a question with a user yet (the personal retriever "
                         "ranks the whole index): ask without one of them")


class Corpus(Protocol):
    """What a runtime asks of where its passages come from."""

    @property
    def index(self) -> PassageIndex | None:
        """The index a method reads beside its retriever (CDIT's separations), loaded on first use; None for a
        store, or without an index."""

    @property
    def loaded_index(self) -> PassageIndex | None:
        """The index as loaded so far, without loading it."""

    @property
    def versions(self) -> Path | None:
        """The folder whose manifest announces new versions to follow (the service swaps them in); None when
        nothing announces any (a store answers from its collection as it is now)."""

    def retriever(self, settings: Settings, contexts: Callable[[], UserContextStore],
                  personal: bool) -> Retriever | None:
        """A question's retriever under ``settings`` (``personal``: ranking with the user's statements); None
        without anything to search."""

    def for_settings(self, settings: Settings, read_only: bool = False) -> Corpus:
        """The corpus another runtime for other settings shares (what this one loaded); ``read_only``: one a
        question that may not change what other callers retrieve reads (``AskRequest.read_only``)."""

    def replace_index(self, index: PassageIndex) -> None:
        """Serve ``index`` from now on (a store has no index to replace: InputError)."""

    def refuse_folder_writes(self) -> None:
        """InputError when an index folder written now would not be what answers (a store answers)."""

    def present(self) -> bool:
        """Whether there is anything to answer from (the service's readiness says so)."""

    def problem(self) -> str | None:
        """Why it cannot answer now (a damaged index, a store that is down), or None."""

    def warm_up(self) -> None:
        """Reach it now: load the index, or ask the store for its count (one that is down says so at start)."""

    def question_search(self, settings: Settings) -> Search | None:
        """How an evaluation retrieves a question without passages of its own when it has no shared index: the
        store's search, its filter pushed down; None for an index folder (the evaluation builds its own)."""


class FolderCorpus:
    """The embedded index of an index folder, or an index handed in (searched even when settings name a store)."""

    def __init__(self, folder: Path | None, embedder: Callable[[], TextEmbedder], mmap: bool,
                 index: PassageIndex | None = None, given: bool = False) -> None:
        self.folder, self._embedder, self._mmap, self._index, self._given = folder, embedder, mmap, index, given

    @property
    def index(self) -> PassageIndex | None:
        if self._index is None and self.folder:
            self._index = PassageIndex.load(self.folder, self._embedder(), mmap=self._mmap)
        return self._index

    @property
    def loaded_index(self) -> PassageIndex | None:
        return self._index

    @property
    def versions(self) -> Path | None:
        return None if self._given else self.folder

    def retriever(self, settings: Settings, contexts: Callable[[], UserContextStore],
                  personal: bool) -> Retriever | None:
        if self.index is None:
            return None
        if personal:
            refuse_where_with_user(settings)
            made: Retriever = retriever_factory("personal")(self.index, contexts(), settings)
            return made
        return IndexRetriever(self.index, settings.retrieval, authority_tiers(settings))

    def for_settings(self, settings: Settings, read_only: bool = False) -> FolderCorpus:
        index = self.index
        if read_only and index is not None:  # the same passages and separations, but no folder to write beside
            index = copy.copy(index)
            index.folder = None
        return FolderCorpus(self.folder, self._embedder, self._mmap, index, self._given)

    def replace_index(self, index: PassageIndex) -> None:
        self._index = index

    def refuse_folder_writes(self) -> None:
        return None

    def present(self) -> bool:
        return self._index is not None if self._given else \
            self.folder is not None and (self.folder / "manifest.json").exists()

    def problem(self) -> str | None:
        if not self.present():
            return None
        try:
            index = self.index
        except IndexStoreError as exc:
            return str(exc)
        return index.damage if index is not None else None

    def warm_up(self) -> None:
        _ = self.index

    def question_search(self, settings: Settings) -> Search | None:
        return None


class StoreCorpus:
    """A vector store's collection (``store.backend``), opened on first use."""

    def __init__(self, settings: Settings, embedder: Callable[[], TextEmbedder], store: VectorStore | None = None
                 ) -> None:
        self._settings, self._embedder, self._store = settings, embedder, store

    @property
    def store(self) -> VectorStore:
        """The store, opened on first use (its collection's dimension checked against the embedder's)."""
        if self._store is None:
            self._store = open_store(self._settings, self._embedder())
        return self._store

    index = None
    loaded_index = None
    versions = None

    def retriever(self, settings: Settings, contexts: Callable[[], UserContextStore],
                  personal: bool) -> Retriever | None:
        return self.store_retriever(settings)

    def store_retriever(self, settings: Settings) -> StoreRetriever:
        """The store searched under ``settings``' retrieval section, its where pushed down."""
        if settings.retrieval.mode != "dense":
            require(settings, "sparse", f"retrieval.mode={settings.retrieval.mode}")
        return StoreRetriever(self.store, self._embedder(), settings.retrieval, authority_tiers(settings))

    def for_settings(self, settings: Settings, read_only: bool = False) -> StoreCorpus:
        return StoreCorpus(self._settings, self._embedder, self.store)

    def replace_index(self, index: PassageIndex) -> None:
        raise InputError(f"store.backend={self._settings.store.backend} holds no index folder to replace")

    def refuse_folder_writes(self) -> None:
        backend = self._settings.store.backend
        raise InputError(f"store.backend={backend} answers from its collection, not an index folder: write into "
                         f"it with `tanglerag index CORPUS --store {backend} ...` (or stores.documents."
                         "write_documents)")

    def present(self) -> bool:
        return True

    def problem(self) -> str | None:
        try:
            self.store.count()
        except StoreError as exc:
            return str(exc)
        return None

    def warm_up(self) -> None:
        self.store.count()

    def question_search(self, settings: Settings) -> Search | None:
        retriever = self.store_retriever(settings)
        return lambda text, depth: retriever.retrieve(Question(text=text), depth).passages


def open_corpus(settings: Settings, embedder: Callable[[], TextEmbedder], folder: Path | None,
                index: PassageIndex | None = None, store: VectorStore | None = None) -> Corpus:
    """The corpus the settings name: ``index`` when one is handed in (searched whatever the store), else the store
    ``store.backend`` names, an index folder's (the embedded index) or a collection's. The one place the two kinds
    are told apart, by capability."""
    if index is not None or capabilities(settings).index_folder:
        return FolderCorpus(folder, embedder, settings.index.mmap, index, given=index is not None)
    return StoreCorpus(settings, embedder, store)
