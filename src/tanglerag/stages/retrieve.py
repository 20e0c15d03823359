"""The retrieval stage: a question in, ranked passages out.

Every retriever (index search, PCAS with a user's personal context, later CDIT's trimmed search)
fulfils one protocol, so the pipeline and methods that retrieve again (Diva) need not know which.
A retriever may hand generation what it learned about the asker (``user_contexts``) and records
its own decisions in the active trace.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from tanglerag.config import RetrievalConfig
from tanglerag.index.passage_index import PassageIndex
from tanglerag.types import Question, RetrievedPassage


class Retrieval(BaseModel):
    passages: list[RetrievedPassage]
    user_contexts: list[str] = Field(default_factory=list, description="statements about the asker for generation")


class Retriever(Protocol):
    def retrieve(self, question: Question, k: int | None = None) -> Retrieval: ...


class IndexRetriever:
    """Searches a PassageIndex with the configured mode (dense, bm25, hybrid).

    >>> retriever = IndexRetriever(index, RetrievalConfig(top_k=3))  # doctest: +SKIP
    >>> retriever.retrieve(Question(text="Who directed Lahu Ke Do Rang?")).passages  # doctest: +SKIP
    """

    def __init__(self, index: PassageIndex, config: RetrievalConfig | None = None) -> None:
        self.index = index
        self.config = config or RetrievalConfig()

    def retrieve(self, question: Question, k: int | None = None) -> Retrieval:
        return Retrieval(passages=self.index.search(question.text, k or self.config.top_k, self.config.mode,
                                                    self.config.rrf_k))
