"""The method contract: a method is built from ``Resources`` and turns a question and its passages into an Answer.

Methods are known by name through the registered families (``tanglerag.family``): ``make_method`` builds
from them, so a method that delegates to another (CDIT's answerer) looks it up here by name.

Subclasses implement ``async def arun`` and return a ``MethodOutput``, awaiting the LLM client (``adecide``,
``acomplete_many``: a method's parallel calls are one batch under the client's semaphore); ``run`` is its facade for
scripts. A method written with ``run`` alone (a plug-in of before) still works: its ``arun`` runs it in a worker
thread, the question's context with it. ``aanswer`` / ``answer`` (here, once for all methods) bind a tracker when
none is bound yet, and build the Answer with the usage and the typed trace the LLM client and ``record_step``
collected. A method that needs more than the passages it was given (retrieve again, read the index, embed) takes it
from ``Resources``.

>>> from tanglerag.testing import canned_llm
>>> method = ConcatMethod(Resources.for_llm(canned_llm([("capital of France", "Paris [1]")])))  # doctest: +SKIP
>>> method.answer(Question(text="What is the capital of France?"), passages).text  # doctest: +SKIP
'Paris [1]'
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import ClassVar

from tanglerag.aio import run_sync
from tanglerag.conflicts import ConflictStep
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.errors import ConfigError, InputError
from tanglerag.family import conflict_reporter, families
from tanglerag.index.passage_index import PassageIndex
from tanglerag.llm.client import LLM
from tanglerag.registry import unknown_name
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import Retriever
from tanglerag.text import UNKNOWN
from tanglerag.tracking import Tracker, answering_as, current_tracker, stage, track
from tanglerag.types import Answer, AnswerPart, Question, RetrievedPassage

SINGLE_ANSWER_METRICS = ("em", "f1", "unk", "nm", "misled", "cited")
MULTI_ANSWER_METRICS = ("ans", "ent", "ear", "d_f1", "unk", "cited")
CONFLICT_METRICS = ("ramdocs_strict", "answer_recall", "d_f1", "misinfo_leak", "noise_cited", "unk", "cited")
"""Multi-answer methods over conflicting documents (MADAM-RAG, Astute RAG): RAMDocs' strict score and leaks."""


@dataclass
class Resources:
    """What a method may use. ``retriever`` and ``index`` are None when passages come from elsewhere
    (an evaluation that hands each question its own documents)."""

    settings: Settings
    llm: LLM
    embedder: TextEmbedder
    retriever: Retriever | None = None
    index: PassageIndex | None = None

    @classmethod
    def for_llm(cls, llm: LLM, settings: Settings | None = None, *, embedder: TextEmbedder | None = None,
                retriever: Retriever | None = None, index: PassageIndex | None = None) -> Resources:
        """Resources around one LLM; the default embedder loads on first use only."""
        settings = settings or Settings()
        return cls(settings=settings, llm=llm, embedder=embedder or Embedder(settings.embedding), retriever=retriever,
                   index=index)


@dataclass
class MethodOutput:
    """What ``run`` decides; ``unknown`` wins over text and citations. ``passages`` replaces the passages
    handed to the method when it answered from others (it retrieved again, pruned, or used none)."""

    text: str
    citations: list[str] = field(default_factory=list)
    unknown: bool = False
    parts: list[AnswerPart] = field(default_factory=list)
    passages: list[RetrievedPassage] | None = None

    @classmethod
    def abstain(cls, passages: list[RetrievedPassage] | None = None) -> MethodOutput:
        return cls(UNKNOWN, unknown=True, passages=passages)


class Method:
    name: ClassVar[str]
    paper: ClassVar[str]  # "000".."004" for the papers in the specification, "baseline" for concat
    description: ClassVar[str]
    calls: ClassVar[str] = "1"  # typical LLM calls per question, for users choosing a method
    default_metrics: ClassVar[tuple[str, ...]] = SINGLE_ANSWER_METRICS
    reads_gold_interpretations: ClassVar[bool] = False  # an oracle: evaluation hands it the gold readings
    answer_is_streamed_text: ClassVar[bool] = True
    """Whether the answer is the text its streamed call writes (concat, vetted), or is assembled from it afterwards
    (COrg writes each answer with its descriptor and marks once its calls are done): a chat client cannot take back
    content, so an assembled answer's tokens stream as progress and the answer comes whole."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.llm = resources.llm
        self.settings = resources.settings

    @property
    def order_dependent(self) -> bool:
        """True when an answer depends on the questions answered before (a memory the method writes):
        evaluation then keeps questions in order, one at a time, so results do not depend on timing."""
        return False

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Whichever of ``run`` and ``arun`` a class defines itself decides, and the other becomes its facade: a
        subclass of a built-in method that overrides ``run`` answers with its ``run`` everywhere, not with the
        ``arun`` it inherited."""
        super().__init_subclass__(**kwargs)
        if "run" in cls.__dict__ and "arun" not in cls.__dict__:
            cls.arun = Method.arun  # type: ignore[method-assign]
        elif "arun" in cls.__dict__ and "run" not in cls.__dict__:
            cls.run = Method.run  # type: ignore[method-assign]

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """What a method implements. Here: a method that implements ``run`` only, run in a worker thread; cancelled,
        it stops before its next LLM call (a thread cannot be interrupted, but its question's tracker can)."""
        if type(self).run is Method.run:
            raise NotImplementedError(f"{type(self).__name__} implements neither arun nor run")
        try:
            return await asyncio.to_thread(self.run, question, passages)
        except asyncio.CancelledError:
            tracker = current_tracker()
            if tracker is not None:
                tracker.cancel()
            raise

    def run(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """``arun`` for synchronous callers."""
        if type(self).arun is Method.arun:
            raise NotImplementedError(f"{type(self).__name__} implements neither arun nor run")
        return run_sync(self.arun(question, passages))

    async def arun_named(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """``arun`` under this method's name, also where another method delegates to this one: settings by method
        (``llm.structured_stages.corg``) follow the method that takes each decision."""
        with answering_as(self.name):
            return await self.arun(question, passages)

    async def _arun_and_report(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """``arun``, then, with ``conflicts.report`` on, the conflict report on the passages the answer used."""
        result = await self.arun_named(question, passages)
        if self.settings.conflicts.report:
            await report_conflicts(self.resources, question, passages if result.passages is None else result.passages)
        return result

    async def aanswer(self, question: Question, passages: list[RetrievedPassage]) -> Answer:
        tracker = current_tracker()
        if tracker is None:
            with track() as tracker:
                result = await self._arun_and_report(question, passages)
        else:
            result = await self._arun_and_report(question, passages)
        return Answer(question=question.text, method=self.name, text=UNKNOWN if result.unknown else result.text,
                      citations=[] if result.unknown else result.citations,
                      passages=passages if result.passages is None else result.passages, parts=result.parts,
                      is_unknown=result.unknown, usage=tracker.usage.model_copy(deep=True), trace=tracker.trace())

    def answer(self, question: Question, passages: list[RetrievedPassage]) -> Answer:
        """``aanswer`` for synchronous callers."""
        return run_sync(self.aanswer(question, passages))


class _ReportTracker(Tracker):
    """The conflict report's own tracker: cancelled when the question's is, so a client that left stops it too."""

    def __init__(self, question: Tracker) -> None:
        super().__init__()
        self._question = question

    @property
    def cancelled(self) -> bool:
        return self._question.cancelled


async def report_conflicts(resources: Resources, question: Question, passages: list[RetrievedPassage]) -> None:
    """Add the registered reporter's ``ConflictStep`` (the ledger's claims, witnesses and policies) on ``passages`` to
    the active trace; what the reporter would have answered is dropped, so the method's answer stands as it was.

    Its calls run under a tracker of their own and are then charged to the question's ``conflicts`` stage, so the
    report's cost is one line of the usage, apart from the method's (the reporter marks stages of its own). Nothing
    is done without passages, without a reporter, or when the method recorded a report itself (``ledger``)."""
    reporter, tracker = conflict_reporter(), current_tracker()
    if reporter is None or tracker is None or not passages or any(isinstance(s, ConflictStep) for s in tracker.steps):
        return
    if not (isinstance(reporter, type) and issubclass(reporter, Method)):
        raise ConfigError(f"the conflict reporter {reporter!r} of a registered family is not a Method")
    own = _ReportTracker(tracker)
    with stage("conflicts"):
        with track(own):
            await reporter(resources).arun_named(question, passages)
        for call in own.calls:
            tracker.record_call(call.messages, call.replies, call.prompt_tokens, call.completion_tokens, call.cached,
                                call.model_seconds, call.constrained)
        for step in own.steps:
            if isinstance(step, ConflictStep):
                tracker.add_step(step)


def method_classes() -> dict[str, type[Method]]:
    """Method name -> class, over every registered family (``tanglerag.family``), in registration order."""
    table: dict[str, type[Method]] = {}
    for family in families():
        for cls in family.methods:
            if not (isinstance(cls, type) and issubclass(cls, Method)):
                raise ConfigError(f"family {family.name!r} lists {cls!r}, which is not a Method")
            table[cls.name] = cls
    return table


def method_class(name: str) -> type[Method]:
    table = method_classes()
    if name not in table:
        raise InputError(unknown_name("method", name, table))
    return table[name]


def make_method(name: str, resources: Resources) -> Method:
    return method_class(name)(resources)
