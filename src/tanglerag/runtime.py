"""One place that assembles components from ``Settings`` (LLM, embedder, index, retriever, method, reader), and
the one front door every front end asks through: ``Runtime.aanswer(AskRequest)``.

The CLI builds one ``Runtime`` per command and the service one per process. Construction is cheap
(nothing is loaded); each component is built on first use and then shared, and ``warm_up()`` loads
the models up front when latency matters more than start-up time. The CLI, the Python API and the service build an
``AskRequest`` (the question with its user, the conversation before it, a metadata filter, the method, per-request
settings, a progress sink) and await ``aanswer`` (``answer`` for synchronous callers), so a question takes one path
whichever door it came in by. A search (``asearch(SearchRequest)``) takes the same retrieval without the model.

>>> runtime = Runtime(Settings.load(overrides=["retrieval.top_k=5"]), index_dir=Path("my-index"))  # doctest: +SKIP
>>> runtime.answer(AskRequest(question=Question(text="Who directed Lahu Ke Do Rang?"), method="corg")).text  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import functools
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from tanglerag.aio import run_sync
from tanglerag.corpus import Corpus, open_corpus
from tanglerag.embedding_cache import FILE_NAME as EMBEDDING_CACHE
from tanglerag.embedding_cache import CachedEmbedder
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.errors import IndexStoreError, InputError
from tanglerag.family import check_structured_modes
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
from tanglerag.stages.retrieve import Retriever
from tanglerag.stores.base import VectorStore
from tanglerag.stores.registry import require
from tanglerag.tracking import Tracker, stage, track
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.where import parse_where


def _readable_where(where: str | None) -> str | None:
    """A request's filter is read when the request is made (InputError: its type, length or syntax), whichever front
    end made it; the retriever reads it again with the tiers in force, which settings alone do not know."""
    if where is not None:
        parse_where(where, tiers=None)
    return where


RequestWhere = Annotated[str | None, BeforeValidator(_readable_where)]
"""A request's metadata filter, read when the request is made."""


DEFAULT_METHOD = "vetted"
"""The method a person gets without choosing (``ask``, the Python API, ``/v1/ask``): the ledger's document rules
(drafts, dates, versions, release notes, corrections, trust) then one cited answer, at about ``concat``'s cost;
on the people's-documents dev set it has the most right answers of the methods measured there, both halves together
(docs/results/people_docs.md)."""


class AskRequest(BaseModel):
    """One question as a front end asks it: what ``Runtime.aanswer`` takes from the CLI, the Python API, the service
    and ``ask_many`` alike."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    question: Question = Field(description="the question; with a user_id, answered with that user's context (PCAS)")
    method: str = DEFAULT_METHOD
    history: list[Turn] = Field(default_factory=list, description=(
        "the conversation before it: a follow-up that depends on it is first made standalone"))
    where: RequestWhere = Field(None, description="a metadata filter in place of retrieval.where")
    settings: Settings | None = Field(None, description=(
        "per-request settings (a client's options); the LLM, embedding and index sections stay the runtime's"))
    read_only: bool = Field(False, description=(
        "the question may not change what other callers retrieve (a service user key's): a method that keeps state "
        "beside the index (CDIT's witnesses and its determiner's memory) keeps it in memory for this question only"))
    passages: list[RetrievedPassage] | None = Field(None, description=(
        "the passages to answer from instead of a search of the index (an evaluation's own documents)"))
    tracker: Tracker | None = Field(None, description=(
        "the tracker to charge: its on_event hears every stage, model call and step as it happens (a status line, "
        "a progress stream), and it keeps the cost of a question abandoned midway"))


class SearchRequest(BaseModel):
    """A search as a front end asks it: retrieval alone, which ``Runtime.asearch`` answers without the LLM."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    query: str
    top_k: int | None = Field(None, description="passages to return in place of retrieval.top_k")
    where: RequestWhere = Field(None, description="a metadata filter in place of retrieval.where")
    tracker: Tracker | None = Field(None, description="the tracker charged with the retrieve stage")


def _with_where(settings: Settings, where: str) -> Settings:
    """``settings`` with a request's metadata filter in place of ``retrieval.where``."""
    return settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={"where": where})})


def _query(text: str) -> Question:
    """A search's query as the retriever takes it (InputError: a blank one)."""
    try:
        return Question(text=text)
    except ValidationError as exc:
        raise InputError(f"invalid query: {exc.errors()[0]['msg']}") from None


def _embedder(settings: Settings, given: TextEmbedder | None) -> TextEmbedder:
    """``given``, or the configured embedder behind the embedding cache (``embedding.cache``)."""
    if given is not None:
        return given
    config = settings.embedding
    if not config.cache:
        return Embedder(config)
    return CachedEmbedder(Embedder(config), settings.cache_dir / EMBEDDING_CACHE, normalize=config.normalize)


class Runtime:
    def __init__(self, settings: Settings, *, index_dir: Path | None = None, llm: LLM | None = None,
                 embedder: TextEmbedder | None = None, index: PassageIndex | None = None,
                 context_store: UserContextStore | None = None, keep_methods: bool = False,
                 store: VectorStore | None = None) -> None:
        """``llm`` / ``embedder`` / ``index`` / ``context_store`` replace the configured ones (tests, or a runtime for
        other settings sharing what another one loaded). ``keep_methods``: build each method once and answer every
        question with it (an evaluation's questions share their methods); otherwise each question gets its own, as
        concurrent questions of the service must (a method may hold state: CDIT's determiner memory). ``store``: the
        opened ``store.backend`` to share (another runtime's)."""
        check_structured_modes(settings.llm.structured_stages)
        self.settings = settings
        self.index_dir = index_dir
        self._llm = llm
        # built on first use; the corpus holds this, not the runtime: a cycle between the two kept a store (a local
        # Qdrant folder) open after its command had finished, until the garbage collector came by
        self._embedder = functools.cache(functools.partial(_embedder, settings, embedder))
        self._context_store = context_store
        self.corpus: Corpus = open_corpus(settings, self._embedder, index_dir, index, store)
        self._methods: dict[tuple[str, bool], Method] | None = {} if keep_methods else None

    @cached_property
    def llm(self) -> LLM:
        return self._llm or build_llm(self.settings.llm, self.settings.cache_dir)

    @property
    def embedder(self) -> TextEmbedder:
        """The given embedder, or the configured one behind the embedding cache (``embedding.cache``)."""
        return self._embedder()

    @property
    def index(self) -> PassageIndex | None:
        """The index a method reads beside its retriever, loaded on first use; None for a store or without one."""
        return self.corpus.index

    @property
    def loaded_index(self) -> PassageIndex | None:
        """The index as loaded so far, without loading it (None: not loaded yet, or none)."""
        return self.corpus.loaded_index

    @property
    def context_store(self) -> UserContextStore:
        if self._context_store is None:
            self._context_store = UserContextStore(self.settings.personal.store_dir, self.embedder)
        return self._context_store

    def retriever(self, personal: bool = False) -> Retriever | None:
        """The corpus's search, or the ``personal`` retriever a family offers (PCAS's joint ranking of passages and
        the user's statements) when questions carry a user; None without anything to search."""
        if personal:
            require(self.settings, "personal", "a question with a user")
        return self.corpus.retriever(self.settings, lambda: self.context_store, personal)

    def resources(self, personal: bool = False) -> Resources:
        return Resources(settings=self.settings, llm=self.llm, embedder=self.embedder,
                         retriever=self.retriever(personal), index=self.index)

    def method(self, name: str, personal: bool = False) -> Method:
        """The method ``name``: with ``keep_methods``, built once and then answering every question of this runtime
        (a method that remembers earlier questions remembers them all); otherwise a new one."""
        if self._methods is None:
            return make_method(name, self.resources(personal))
        key = (name, personal)
        if key not in self._methods:
            self._methods[key] = make_method(name, self.resources(personal))
        return self._methods[key]

    def pipeline(self, method: str, personal: bool = False) -> RAGPipeline:
        """The pipeline and its method share one retriever."""
        answering = self.method(method, personal)
        if answering.resources.retriever is None:
            raise IndexStoreError("answering a question needs an index: pass --index DIR")
        return RAGPipeline(answering.resources.retriever, answering, self.settings.retrieval.top_k)

    async def aanswer(self, request: AskRequest) -> Answer:
        """The front door: retrieve and answer ``request.question`` with ``request.method``, under the request's
        settings and filter; with ``history`` (a conversation's earlier turns), first made standalone when it
        depends on them (``stages/followup.py``), in the same trace as the answer. Cancelling the awaiting task
        cancels the question where it waits (a model call in a worker thread, the embedded model's, ends first)."""
        runtime = self.for_request(request)
        question = request.question
        with track(request.tracker) as tracker:
            if request.history:
                text = await standalone(runtime.llm, request.history, question.text, runtime.settings.conversation)
                question = question.model_copy(update={"text": text})
            personal = question.user_id is not None
            if request.passages is not None:
                tracker.retrieved(request.passages)
                method = await asyncio.to_thread(runtime.method, request.method, personal)
                return await method.aanswer(question, request.passages)
            # built in a worker thread: the first question loads the index (and the embedder) from disk
            pipeline = await asyncio.to_thread(runtime.pipeline, request.method, personal)
            return await pipeline.aask(question, tracker=tracker)

    def answer(self, request: AskRequest) -> Answer:
        """``aanswer`` for synchronous callers."""
        return run_sync(self.aanswer(request))

    async def asearch(self, request: SearchRequest) -> list[RetrievedPassage]:
        """The passages ``request.query`` retrieves, ranked, under the request's filter: the index is searched as a
        question's retrieve stage searches it, and the LLM is neither called nor built. The search (and a first load
        of the index) runs in a worker thread, as the pipeline's does; the tracker records it as ``retrieve``."""
        question = _query(request.query)
        with track(request.tracker), stage("retrieve"):
            return await asyncio.to_thread(self._retrieved, question, request)

    def search(self, request: SearchRequest) -> list[RetrievedPassage]:
        """``asearch`` for synchronous callers."""
        return run_sync(self.asearch(request))

    def _retrieved(self, question: Question, request: SearchRequest) -> list[RetrievedPassage]:
        """The search a question's retrieve stage makes (the store's, or the index's), under the request's filter."""
        runtime = self if request.where is None else self.with_settings(_with_where(self.settings, request.where))
        retriever = runtime.retriever()
        if retriever is None:
            raise IndexStoreError("searching needs an index: pass --index DIR")
        return retriever.retrieve(question, request.top_k).passages

    def for_request(self, request: AskRequest) -> Runtime:
        """The one place a request's runtime is derived: this runtime, or one for the request's settings and filter
        sharing what this one loaded, whose index is a detached view when the request is read-only (InputError: a
        filter that cannot be read)."""
        if request.settings is None and request.where is None and not request.read_only:
            return self
        settings = request.settings or self.settings
        if request.where is not None:
            settings = _with_where(settings, request.where)
        return self.with_settings(settings, read_only=request.read_only)

    def reader(self) -> Reader:
        """The D-F1 reader: the configured LLM, or a Hugging Face extractive QA model (``eval.reader``)."""
        return build_reader(self.settings.eval.reader, self.llm)

    def with_settings(self, settings: Settings, read_only: bool = False) -> Runtime:
        """A runtime for other method settings that shares what this one already loaded (LLM, embedder, corpus);
        ``read_only``: its corpus is the view a read-only request reads (``AskRequest.read_only``).

        The service uses it for per-request options; the LLM, embedding and index sections stay this one's.
        """
        settings = settings.model_copy(update={"llm": self.settings.llm, "embedding": self.settings.embedding,
                                               "index": self.settings.index, "cache_dir": self.settings.cache_dir,
                                               "store": self.settings.store})
        runtime = Runtime(settings, index_dir=self.index_dir, llm=self.llm, embedder=self.embedder,
                          context_store=self.context_store)
        runtime.corpus = self.corpus.for_settings(settings, read_only)
        return runtime

    def replace_index(self, index: PassageIndex) -> None:
        """Serve ``index`` from now on (after the service added documents); work in progress keeps the old one, and
        methods are built anew on it."""
        self.corpus.replace_index(index)
        if self._methods is not None:
            self._methods = {}

    def for_evaluation(self, index: PassageIndex | None) -> Runtime:
        """A runtime for these settings whose methods search ``index`` (an evaluation's pooled passages), else
        this runtime's corpus, and answer every question of the run, sharing the models this one loaded."""
        runtime = Runtime(self.settings, llm=self.llm, embedder=self.embedder, index=index,
                          context_store=self.context_store, keep_methods=True)
        if index is None:
            runtime.corpus = self.corpus.for_settings(self.settings)
        return runtime

    def warm_up(self, index: bool = True) -> None:
        """Load the LLM, the embedding model and (with ``index``) the index now."""
        self.llm.warm_up()
        loads = getattr(self.embedder, "warm_up", None)
        if loads is not None:  # the model itself: an embedding-cache hit for a text would load nothing
            loads()
        else:
            self.embedder.embed(["warm up"])
        if index:
            self.corpus.warm_up()
