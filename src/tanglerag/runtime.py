"""One place that assembles components from ``Settings``: LLM, embedder, index, retriever, method, reader.

The CLI builds one ``Runtime`` per command and the service one per process. Construction is cheap
(nothing is loaded); each component is built on first use and then shared, and ``warm_up()`` loads
the models up front when latency matters more than start-up time.

>>> runtime = Runtime(Settings.load(overrides=["retrieval.top_k=5"]), index_dir=Path("my-index"))  # doctest: +SKIP
>>> runtime.pipeline("corg").ask("Who directed Lahu Ke Do Rang?").text  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from tanglerag.embedding_cache import FILE_NAME as EMBEDDING_CACHE
from tanglerag.embedding_cache import CachedEmbedder
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.errors import IndexStoreError, InputError
from tanglerag.family import check_structured_modes, retriever_factory
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.llm.client import LLM
from tanglerag.llm.factory import build_llm
from tanglerag.methods.base import Method, Resources, make_method
from tanglerag.metrics.readers import build_reader
from tanglerag.metrics.registry import Reader
from tanglerag.pipeline import RAGPipeline
from tanglerag.settings import Settings
from tanglerag.stages.followup import Turn, standalone
from tanglerag.stages.retrieve import IndexRetriever, Retriever
from tanglerag.tracking import Tracker, track
from tanglerag.types import Answer, Question
from tanglerag.where import authority_tiers


def refuse_where_with_user(settings: Settings) -> None:
    """The personal retriever ranks the whole index: a ``retrieval.where`` it would not apply is refused (for the
    CLI, the API and the service alike), not silently ignored."""
    if settings.retrieval.where:
        raise InputError("a where filter does not apply to a question with a user yet (the personal retriever "
                         "ranks the whole index): ask without one of them")


class Runtime:
    def __init__(self, settings: Settings, *, index_dir: Path | None = None, llm: LLM | None = None,
                 embedder: TextEmbedder | None = None) -> None:
        """``llm`` / ``embedder`` replace the configured ones (tests, or a process that already has them)."""
        check_structured_modes(settings.llm.structured_stages)
        self.settings = settings
        self.index_dir = index_dir
        self._llm = llm
        self._embedder = embedder

    @cached_property
    def llm(self) -> LLM:
        return self._llm or build_llm(self.settings.llm, self.settings.cache_dir)

    @cached_property
    def embedder(self) -> TextEmbedder:
        """The given embedder, or the configured one behind the embedding cache (``embedding.cache``)."""
        if self._embedder is not None:
            return self._embedder
        config = self.settings.embedding
        if not config.cache:
            return Embedder(config)
        return CachedEmbedder(Embedder(config), self.settings.cache_dir / EMBEDDING_CACHE, normalize=config.normalize)

    @cached_property
    def index(self) -> PassageIndex | None:
        if not self.index_dir:
            return None
        return PassageIndex.load(self.index_dir, self.embedder, mmap=self.settings.index.mmap)

    @cached_property
    def context_store(self) -> UserContextStore:
        return UserContextStore(self.settings.personal.store_dir, self.embedder)

    def retriever(self, personal: bool = False) -> Retriever | None:
        """Index search, or the ``personal`` retriever a family offers (PCAS's joint ranking of passages and the
        user's statements) when questions carry a user; None without an index."""
        if self.index is None:
            return None
        if personal:
            refuse_where_with_user(self.settings)
            retriever: Retriever = retriever_factory("personal")(self.index, self.context_store, self.settings)
            return retriever
        return IndexRetriever(self.index, self.settings.retrieval, authority_tiers(self.settings))

    def resources(self, personal: bool = False, index: PassageIndex | None = None) -> Resources:
        """``index`` replaces the configured one (an evaluation's pooled passages): methods retrieve from it."""
        retriever = (IndexRetriever(index, self.settings.retrieval, authority_tiers(self.settings)) if index is not None
                     else self.retriever(personal))
        return Resources(settings=self.settings, llm=self.llm, embedder=self.embedder, retriever=retriever,
                         index=index if index is not None else self.index)

    def method(self, name: str, personal: bool = False, index: PassageIndex | None = None) -> Method:
        return make_method(name, self.resources(personal, index))

    def pipeline(self, method: str, personal: bool = False) -> RAGPipeline:
        """The pipeline and its method share one retriever."""
        resources = self.resources(personal)
        if resources.retriever is None:
            raise IndexStoreError("answering a question needs an index: pass --index DIR")
        return RAGPipeline(resources.retriever, make_method(method, resources), self.settings.retrieval.top_k)

    def answer(self, method: str, question: Question, *, history: Sequence[Turn] = (), personal: bool = False,
               tracker: Tracker | None = None) -> Answer:
        """Answer ``question`` with ``method``; with ``history`` (a conversation's earlier turns), first made
        standalone when it depends on them (``stages/followup.py``), in the same trace as the answer."""
        if history:
            with track(tracker) as tracker:
                text = standalone(self.llm, history, question.text, self.settings.conversation)
            question = question.model_copy(update={"text": text})
        return self.pipeline(method, personal=personal).ask(question, tracker=tracker)

    def reader(self) -> Reader:
        """The D-F1 reader: the configured LLM, or a Hugging Face extractive QA model (``eval.reader``)."""
        return build_reader(self.settings.eval.reader, self.llm)

    def with_settings(self, settings: Settings) -> Runtime:
        """A runtime for other method settings that shares what this one already loaded (LLM, embedder, index).

        The service uses it for per-request options; the LLM, embedding and index sections stay this one's.
        """
        other = Runtime(settings.model_copy(update={"llm": self.settings.llm, "embedding": self.settings.embedding,
                                                    "index": self.settings.index, "cache_dir": self.settings.cache_dir}),
                        index_dir=self.index_dir, llm=self.llm, embedder=self.embedder)
        other.__dict__["index"] = self.index
        other.__dict__["context_store"] = self.context_store
        return other

    def replace_index(self, index: PassageIndex) -> None:
        """Serve ``index`` from now on (after the service added documents); work in progress keeps the old one."""
        self.__dict__["index"] = index

    def warm_up(self, index: bool = True) -> None:
        """Load the LLM, the embedding model and (with ``index``) the index now."""
        self.llm.warm_up()
        self.embedder.embed(["warm up"])
        if index:
            _ = self.index
