"""MADAM-RAG's trace step: every round's agent answers and the aggregator's verdict, and why the debate ended."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep
from tanglerag.types import AnswerPart


class AgentTurn(BaseModel):
    passage_id: str
    answer: str
    reason: str = ""
    changed: bool = False  # differs from this agent's answer in the round before
    unreadable: bool = False  # the reply could not be read: the agent counts as having found nothing


class DebateRound(BaseModel):
    agents: list[AgentTurn]
    kept: list[AnswerPart] = Field(default_factory=list)  # the aggregator's answers (empty: not aggregated)
    summary: str = ""
    aggregated: bool = True


class DebateStep(TraceStep):
    """Rounds x agents, each round's aggregation, and the reason the debate stopped."""

    kind: Literal["debate"] = "debate"
    title: ClassVar[str] = "Agents' debate"
    rounds: list[DebateRound] = Field(default_factory=list)
    stopped: str = ""

    def lines(self) -> list[str]:
        out = [f"debate ({len(self.rounds)} round(s); {self.stopped})"]
        for number, debate_round in enumerate(self.rounds, 1):
            out.append(f"  round {number}:")
            out += [f"    {turn.passage_id}: {turn.answer}" + (" (changed)" if turn.changed else "")
                    + (" (unreadable)" if turn.unreadable else "") for turn in debate_round.agents]
            if debate_round.aggregated:
                kept = "; ".join(f"{p.answer} ({p.descriptor}) <- {', '.join(p.citations)}" for p in debate_round.kept)
                out.append(f"    aggregator: {kept or 'unknown'}")
        return out

    def headline(self) -> str | None:
        return f"{len(self.rounds)} debate round(s); {self.stopped}" if self.rounds else None
