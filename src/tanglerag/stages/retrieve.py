"""The retrieval stage: a question in, ranked passages out.

Every retriever (index search, which honours CDIT's separations; PCAS with a user's personal context)
fulfils one protocol, so the pipeline and methods that retrieve again (Diva) need not know which.
A retriever may hand generation what it learned about the asker (``user_contexts``) and records
its own decisions in the active trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal, Protocol

from pydantic import BaseModel, Field

from tanglerag.config import RetrievalConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.index.passage_index import PassageIndex
from tanglerag.trace import TraceStep
from tanglerag.tracking import record_step
from tanglerag.types import Question, RetrievedPassage
from tanglerag.where import parse_where


class SeparatedHit(BaseModel):
    passage_id: str
    separated_from: str  # the better-ranked passage it was separated from by CDIT's witnesses


class SeparationStep(TraceStep):
    """Retrieval left out passages that the index's trim log separates from one already returned."""

    kind: Literal["separation"] = "separation"
    title: ClassVar[str] = "CDIT: passages left out"
    dropped: list[SeparatedHit]

    def lines(self) -> list[str]:
        return ["CDIT separation: " + ", ".join(f"{d.passage_id} (separated from {d.separated_from})"
                                               for d in self.dropped)]


class Retrieval(BaseModel):
    passages: list[RetrievedPassage]
    user_contexts: list[str] = Field(default_factory=list, description="statements about the asker for generation")


class Retriever(Protocol):
    def retrieve(self, question: Question, k: int | None = None) -> Retrieval: ...


class IndexRetriever:
    """Searches a PassageIndex with the configured mode (dense, bm25, hybrid), among the passages whose metadata
    passes ``retrieval.where`` when one is set.

    >>> retriever = IndexRetriever(index, RetrievalConfig(top_k=3))  # doctest: +SKIP
    >>> retriever.retrieve(Question(text="Who directed Lahu Ke Do Rang?")).passages  # doctest: +SKIP
    """

    def __init__(self, index: PassageIndex, config: RetrievalConfig | None = None,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> None:
        """``tiers`` map the authority tier names of ``config.where`` and of the documents; a where that cannot be
        read with them is an InputError here, before any search."""
        self.index = index
        self.config = config or RetrievalConfig()
        self.where = parse_where(self.config.where, tiers)

    def retrieve(self, question: Question, k: int | None = None) -> Retrieval:
        hits, dropped = self.index.search_trimmed(question.text, k or self.config.top_k, self.config.mode,
                                                  self.config.rrf_k, self.where)
        if dropped:  # CDIT's separation table spoke: say so in the trace
            record_step(SeparationStep(dropped=[SeparatedHit(passage_id=d, separated_from=s) for d, s in dropped]))
        return Retrieval(passages=hits)
