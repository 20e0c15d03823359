"""COrg's trace steps (and its baselines'): the relation graph, the groups, the Retrieve ranking, the summary."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep


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


class ContextGraphStep(TraceStep):
    """COrg's relation graph over the contexts."""

    kind: Literal["corg_graph"] = "corg_graph"
    title: ClassVar[str] = "Context graph"
    mode: Literal["pairwise", "extract"]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    pairs_judged: int = 0
    pairs_total: int = 0
    unparsed: int = 0

    def lines(self) -> list[str]:
        number = {n.passage_id: n.number for n in self.nodes}
        out = [f"context graph ({self.mode}; {self.pairs_judged}/{self.pairs_total} pairs judged, {self.unparsed} unparsed)"]
        out += [f"  [{number[e.source]}] {e.source} -- {e.relation} -- [{number[e.target]}] {e.target} ({e.origin})"
                for e in self.edges]
        return out


class DroppedContext(BaseModel):
    passage_id: str
    reason: Literal["ambiguous", "duplicate"]
    kept_instead: str | None = None  # the context that makes this one redundant


class ContextGroup(BaseModel):
    passage_ids: list[str]
    question: str = ""  # the question the group was asked (plural form for several contexts)


class GroupsStep(TraceStep):
    """How contexts were grouped for answering (COrg's reranker, or a grouping baseline)."""

    kind: Literal["groups"] = "groups"
    title: ClassVar[str] = "Groups and dropped contexts"
    strategy: Literal["corg", "random", "kmeans"]
    groups: list[ContextGroup]
    dropped: list[DroppedContext] = Field(default_factory=list)
    answer_each: bool = False  # COrg answered every kept context in its own call

    def lines(self) -> list[str]:
        out = [f"groups ({self.strategy}{', each context answered alone' if self.answer_each else ''})"]
        out += [f"  {g}. {', '.join(group.passage_ids)}" + (f"  asked: {group.question}" if group.question else "")
                for g, group in enumerate(self.groups, 1)]
        out += [f"  dropped {d.passage_id}: {d.reason}" + (f" (kept {d.kept_instead})" if d.kept_instead else "")
                for d in self.dropped]
        return out


class OverruledAnswer(BaseModel):
    answer: str
    citations: list[str]
    support: int  # contexts backing it: those it cites and their dropped duplicates
    kept_answer: str  # the better-backed answer it contradicts
    kept_support: int


class ConflictsStep(TraceStep):
    """``corg.conflicts=support``: answers dropped because a contradicting answer had more contexts behind it."""

    kind: Literal["corg_conflicts"] = "corg_conflicts"
    title: ClassVar[str] = "Conflicting answers"
    overruled: list[OverruledAnswer] = Field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"conflicting answers: {len(self.overruled)} overruled"]
        out += [f"  {o.answer} (backed by {o.support}: {', '.join(o.citations)}) lost to {o.kept_answer} "
                f"(backed by {o.kept_support})" for o in self.overruled]
        return out


class ContextRankingStep(TraceStep):
    """The Retrieve baseline: the LLM's ranking of the contexts and the ones it kept."""

    kind: Literal["context_ranking"] = "context_ranking"
    title: ClassVar[str] = "Context ranking"
    ranking: list[str]
    chosen: list[str]

    def lines(self) -> list[str]:
        return [f"context ranking: {', '.join(self.ranking)}; kept {', '.join(self.chosen)}"]


class ContextSummaryStep(TraceStep):
    """The Summarize baseline: the summary the answer was read from."""

    kind: Literal["summary"] = "summary"
    title: ClassVar[str] = "Summary"
    summary: str

    def lines(self) -> list[str]:
        return ["summary:", f"  {self.summary}"]
