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
from tanglerag.embeddings import TextEmbedder, embedder_identity
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


class FloorStep(TraceStep):
    """Retrieval left out passages under the relevance floor (``retrieval.min_score``): clearly unrelated to the
    question, they would only have filled the top-k."""

    kind: Literal["floor"] = "floor"
    title: ClassVar[str] = "Passages under the relevance floor"
    floor: float
    dropped: list[tuple[str, float]]  # (passage id, its score)

    def lines(self) -> list[str]:
        return [f"under the relevance floor {self.floor:g}, left out: "
                + ", ".join(f"{pid} ({score:.3f})" for pid, score in self.dropped)]

    def headline(self) -> str:
        return self.lines()[0]


CALIBRATED_FLOORS: dict[str, float] = {"all-MiniLM-L6-v2-onnx-int8": 0.2}
"""``retrieval.min_score=auto`` for each embedder measured (by its identity): a cosine under which a passage is clearly
unrelated to the question. A floor belongs to one embedder's scores, so one not measured gets none. Chosen on the tune
half of the doc-folder probes (benchmarks/relevance_floor.py; docs/benchmarks.md, relevance floor)."""


def floor_for(config: RetrievalConfig, embedder: TextEmbedder) -> float | None:
    """The relevance floor in force: ``config.min_score``, ``auto`` read for ``embedder``; None in a mode other than
    dense (fused ranks and BM25 weights are no cosine, and no one floor fits them)."""
    if config.mode != "dense" or config.min_score is None:
        return None
    if config.min_score == "auto":
        return CALIBRATED_FLOORS.get(embedder_identity(embedder))
    return config.min_score


def above_floor(hits: list[RetrievedPassage], floor: float | None) -> list[RetrievedPassage]:
    """``hits`` at or above ``floor``, the others said in the trace; ranks kept as they were."""
    if floor is None:
        return hits
    kept = [h for h in hits if h.score >= floor]
    if len(kept) < len(hits):
        record_step(FloorStep(floor=floor, dropped=[(h.passage.id, h.score) for h in hits if h.score < floor]))
    return kept


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
        return Retrieval(passages=above_floor(hits, floor_for(self.config, self.index.embedder)))
