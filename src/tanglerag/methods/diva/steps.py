"""Diva's trace steps (paper 001): interpretations, retrieval, pruning and verification; ToC's clarification tree."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep


class InterpretationRetrieval(BaseModel):
    query: str
    passage_ids: list[str]


class KeptPassage(BaseModel):
    passage_id: str
    relevance: float  # mean similarity to all interpretations


class Verification(BaseModel):
    interpretation: str
    covered: bool | None  # None: the reply could not be read (counted as not covered)


Grade = Literal["Useful", "PartialUseful", "Useless"]
"""How well the kept passages cover the interpretations (Diva's retrieval verification)."""


class DivaStep(TraceStep):
    """Diva: ambiguity types and reason, pseudo-interpretations, retrieval per interpretation, the pruned set,
    the verification, its grade and the generation mode chosen. Baselines fill what they do."""

    kind: Literal["diva"] = "diva"
    title: ClassVar[str] = "Interpretations, retrieval and verification"
    ambiguity_types: list[str] = Field(default_factory=list)
    reason: str = ""
    interpretations: list[str] = Field(default_factory=list)
    interpretation_fallback: bool = False  # nothing usable came back: the question was treated as unambiguous
    unreadable: int = 0  # decisions (ambiguity, interpretations, each verdict) whose reply could not be read
    retrievals: list[InterpretationRetrieval] = Field(default_factory=list)
    kept: list[KeptPassage] = Field(default_factory=list)
    verification_mode: Literal["each", "batched"] | None = None
    verification: list[Verification] = Field(default_factory=list)
    grade: Grade | None = None
    mode: Literal["rag", "closed-book"]
    demos: list[str] = Field(default_factory=list)  # questions of the few-shot demonstrations used

    def lines(self) -> list[str]:
        out = [f"diva (mode {self.mode}" + (f", grade {self.grade}" if self.grade else "")
               + (f", {self.unreadable} unreadable replies" if self.unreadable else "") + ")"]
        if self.ambiguity_types or self.reason:
            out.append(f"  ambiguity: {', '.join(self.ambiguity_types) or 'none'}; {self.reason}")
        if self.interpretations:
            out.append("  interpretations" + (" (none usable: the question itself)" if self.interpretation_fallback
                                              else "") + ":")
            out += [f"    {n}. {q}" for n, q in enumerate(self.interpretations, 1)]
        out += [f"  retrieved for {r.query}: {', '.join(r.passage_ids)}" for r in self.retrievals]
        if self.kept:
            out.append("  kept: " + ", ".join(f"{k.passage_id} ({k.relevance:.2f})" for k in self.kept))
        out += [f"  covers {v.interpretation}: {'?' if v.covered is None else 'yes' if v.covered else 'no'}"
                for v in self.verification]
        return out

    def headline(self) -> str | None:
        if not self.grade:
            return None
        covered = sum(bool(v.covered) for v in self.verification)
        return (f"retrieval: {self.grade} — {covered} of {len(self.interpretations)} interpretations covered"
                f"{'; answered closed-book' if self.mode == 'closed-book' else ''}")


class ClarificationNode(BaseModel):
    question: str
    answer: str
    depth: int
    parent: int | None  # index of the parent node; None for children of the root question
    passage_ids: list[str]


class ClarificationTreeStep(TraceStep):
    """ToC: the tree of clarifications it explored, each node with the passages retrieved for it."""

    kind: Literal["clarification_tree"] = "clarification_tree"
    title: ClassVar[str] = "Tree of clarifications"
    nodes: list[ClarificationNode]
    expansions: int

    def lines(self) -> list[str]:
        out = [f"tree of clarifications ({self.expansions} expansions, {len(self.nodes)} readings)"]
        out += [f"  {'  ' * (n.depth - 1)}- {n.question} -> {n.answer}" for n in self.nodes]
        return out
