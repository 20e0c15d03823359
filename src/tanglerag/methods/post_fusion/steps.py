"""Post-fusion's trace steps (paper 004): the answer pool and vote, Concat+PF's fallback, PF+Concat's distillation,
the chain-of-thought rationale."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.stages.vote import VoteCount
from tanglerag.trace import TraceStep


class PoolAnswer(BaseModel):
    passage_id: str | None
    answer: str
    unknown: bool


class AnswerPoolStep(TraceStep):
    """Post-fusion: one answer per passage, the vote table and, where a vote decides (``voted``), its winner
    (None: every answer was unknown). PF+Concat keeps the pool but lets one call distil instead."""

    kind: Literal["answer_pool"] = "answer_pool"
    title: ClassVar[str] = "Post-fusion votes"
    pool: list[PoolAnswer]
    tally: list[VoteCount]
    voted: bool = True
    winner: str | None = None

    def lines(self) -> list[str]:
        decided = f"winner: {self.winner}" if self.voted else "no vote: the answer is distilled"
        out = [f"answer pool ({len(self.pool)} answers; {decided})"]
        out += [f"  {row.votes} vote(s)  {row.answer}  <- {', '.join(row.passage_ids)}" for row in self.tally]
        unknown = [a.passage_id or "?" for a in self.pool if a.unknown]
        if unknown:
            out.append(f"  unknown from: {', '.join(unknown)}")
        return out


class FallbackStep(TraceStep):
    """Concat+PF: whether concatenation said unknown and post-fusion took over."""

    kind: Literal["fallback"] = "fallback"
    title: ClassVar[str] = "Fallback"
    fired: bool

    def lines(self) -> list[str]:
        return [f"fallback: {'post-fusion took over' if self.fired else 'not needed'}"]


class DistillStep(TraceStep):
    """PF+Concat: passages whose own answer was not unknown, the candidates, and the one chosen."""

    kind: Literal["distill"] = "distill"
    title: ClassVar[str] = "Distillation"
    kept: list[str]
    candidates: list[str]
    chosen: str | None = None

    def lines(self) -> list[str]:
        return [(f"distill: kept {', '.join(self.kept) or 'none'}; candidates {'; '.join(self.candidates) or 'none'}; "
                f"chosen {self.chosen}")]


class RationaleStep(TraceStep):
    """Pruning / Summary chain of thought: whether the final-answer line was found, the sources it named."""

    kind: Literal["rationale"] = "rationale"
    title: ClassVar[str] = "Rationale"
    format_ok: bool
    cited_numbers: list[int] = Field(default_factory=list)

    def lines(self) -> list[str]:
        return [(f"rationale: final answer line {'found' if self.format_ok else 'missing'}; sources named "
                f"{self.cited_numbers or 'none'}")]
