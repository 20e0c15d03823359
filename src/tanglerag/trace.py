"""The typed trace of one answer: every LLM call and every decision a method made.

A trace is what ``ask --json --trace``, eval predictions, the service and the inspector show to
explain *why* an answer came out. Calls are recorded by the LLM client, never by a method; steps
are pydantic models told apart by ``kind``, one per method family, so a trace read back from JSON
is the same typed object. Passages are named by id everywhere; ``number`` is the 1-based position
a prompt showed them at, where a prompt numbered them.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    """One chat message, as sent to a model (and kept in the trace)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class LLMCall(BaseModel):
    """One completion, cached or not, charged to the stage that was running."""

    stage: str
    messages: list[Message]
    replies: list[str]
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    model_seconds: float


# -- COrg (paper 000) and its baselines ---------------------------------------------------------

class GraphNode(BaseModel):
    number: int
    passage_id: str
    entity: str | None = None  # extract mode only
    descriptor: str | None = None
    answer: str | None = None


class GraphEdge(BaseModel):
    source: str
    target: str
    relation: Literal["ambiguous", "none", "distracting", "counterfactual", "duplicated"]
    origin: Literal["llm", "mirrored", "rule"]


class ContextGraphStep(BaseModel):
    """COrg's relation graph over the contexts."""

    kind: Literal["corg_graph"] = "corg_graph"
    mode: Literal["pairwise", "extract"]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    pairs_judged: int = 0
    pairs_total: int = 0
    unparsed: int = 0


class DroppedContext(BaseModel):
    passage_id: str
    reason: Literal["ambiguous", "duplicate"]
    kept_instead: str | None = None  # the context that makes this one redundant


class ContextGroup(BaseModel):
    passage_ids: list[str]
    question: str = ""  # the question the group was asked (plural form for several contexts)


class GroupsStep(BaseModel):
    """How contexts were grouped for answering (COrg's reranker, or a grouping baseline)."""

    kind: Literal["groups"] = "groups"
    strategy: Literal["corg", "random", "kmeans"]
    groups: list[ContextGroup]
    dropped: list[DroppedContext] = Field(default_factory=list)
    answer_each: bool = False  # COrg answered every kept context in its own call


class ContextRankingStep(BaseModel):
    """The Retrieve baseline: the LLM's ranking of the contexts and the ones it kept."""

    kind: Literal["context_ranking"] = "context_ranking"
    ranking: list[str]
    chosen: list[str]


class SummaryStep(BaseModel):
    """The Summarize baseline: the summary the answer was read from."""

    kind: Literal["summary"] = "summary"
    summary: str


# -- answer integration (paper 004) --------------------------------------------------------------

class PoolAnswer(BaseModel):
    passage_id: str | None
    answer: str
    unknown: bool


class VoteCount(BaseModel):
    answer: str
    votes: int
    passage_ids: list[str]


class AnswerPoolStep(BaseModel):
    """Post-fusion: one answer per passage, the vote table and, where a vote decides (``voted``), its winner
    (None: every answer was unknown). PF+Concat keeps the pool but lets one call distil instead."""

    kind: Literal["answer_pool"] = "answer_pool"
    pool: list[PoolAnswer]
    tally: list[VoteCount]
    voted: bool = True
    winner: str | None = None


class FallbackStep(BaseModel):
    """Concat+PF: whether concatenation said unknown and post-fusion took over."""

    kind: Literal["fallback"] = "fallback"
    fired: bool


class DistillStep(BaseModel):
    """PF+Concat: passages whose own answer was not unknown, the candidates, and the one chosen."""

    kind: Literal["distill"] = "distill"
    kept: list[str]
    candidates: list[str]
    chosen: str | None = None


class RationaleStep(BaseModel):
    """Pruning / Summary chain of thought: whether the final-answer line was found, the sources it named."""

    kind: Literal["rationale"] = "rationale"
    format_ok: bool
    cited_numbers: list[int] = Field(default_factory=list)


# -- Diva (paper 001) and its baselines ----------------------------------------------------------

class InterpretationRetrieval(BaseModel):
    query: str
    passage_ids: list[str]


class KeptPassage(BaseModel):
    passage_id: str
    relevance: float  # mean similarity to all interpretations


class Verification(BaseModel):
    interpretation: str
    covered: bool | None  # None: the reply could not be read (counted as not covered)


class DivaStep(BaseModel):
    """Diva: ambiguity types and reason, pseudo-interpretations, retrieval per interpretation, the pruned set,
    the verification, its grade and the generation mode chosen. Baselines fill what they do."""

    kind: Literal["diva"] = "diva"
    ambiguity_types: list[str] = Field(default_factory=list)
    reason: str = ""
    interpretations: list[str] = Field(default_factory=list)
    interpretation_fallback: bool = False  # nothing usable came back: the question was treated as unambiguous
    retrievals: list[InterpretationRetrieval] = Field(default_factory=list)
    kept: list[KeptPassage] = Field(default_factory=list)
    verification_mode: Literal["each", "batched"] | None = None
    verification: list[Verification] = Field(default_factory=list)
    grade: Literal["Useful", "PartialUseful", "Useless"] | None = None
    mode: Literal["rag", "closed-book"]
    demos: list[str] = Field(default_factory=list)  # questions of the few-shot demonstrations used


class ClarificationNode(BaseModel):
    question: str
    answer: str
    depth: int
    parent: int | None  # index of the parent node; None for children of the root question
    passage_ids: list[str]


class ClarificationTreeStep(BaseModel):
    """ToC: the tree of clarifications it explored, each node with the passages retrieved for it."""

    kind: Literal["clarification_tree"] = "clarification_tree"
    nodes: list[ClarificationNode]
    expansions: int


# -- personal context (paper 002) ----------------------------------------------------------------

class PersonalContextStep(BaseModel):
    """PCAS: the user statement chosen with the passages, and the combined score of the best pair."""

    kind: Literal["personal_context"] = "personal_context"
    user: str
    context_id: str | None = None
    text: str | None = None
    score: float | None = None
    lam: float
    beam: int


# -- CDIT (paper 003) ------------------------------------------------------------------------------

class SeparatedHit(BaseModel):
    passage_id: str
    separated_from: str  # the better-ranked passage it was separated from by CDIT's witnesses


class SeparationStep(BaseModel):
    """Retrieval left out passages that the index's trim log separates from one already returned."""

    kind: Literal["separation"] = "separation"
    dropped: list[SeparatedHit]


class Judgment(BaseModel):
    passage_id: str
    consistent: bool | None  # None: the judge's reply could not be read (the passage is kept)


class CditStep(BaseModel):
    """CDIT: each retrieved passage judged against the question, what was discarded, the witnesses recorded."""

    kind: Literal["cdit"] = "cdit"
    cmd: str
    judge: str
    judgments: list[Judgment]
    discarded: list[str]
    witnesses_added: int = 0
    separated_now: list[tuple[str, str]] = Field(default_factory=list)
    recorded: bool = False  # written to the index's trim log
    reused_from: str | None = None  # the close query judged before whose verdicts were reused (determiner)
    reused: int = 0  # verdicts taken from it instead of judged again
    answer_method: str


Step = Annotated[
    ContextGraphStep | GroupsStep | ContextRankingStep | SummaryStep | AnswerPoolStep | FallbackStep | DistillStep
    | RationaleStep | PersonalContextStep | DivaStep | ClarificationTreeStep | SeparationStep | CditStep,
    Field(discriminator="kind"),
]

S = TypeVar("S", bound=BaseModel)


class Trace(BaseModel):
    calls: list[LLMCall] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)

    def find(self, kind: type[S]) -> S | None:
        """The first step of this type, or None."""
        return next((s for s in self.steps if isinstance(s, kind)), None)
