"""Astute RAG's trace step: the model's own passages, each round's groups with their sources, and the choice."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep
from tanglerag.types import AnswerPart


class SourceGroup(BaseModel):
    statement: str
    answer: str
    sources: list[str]  # passage ids, and "memory-N" for the model's own passage N
    conflict: bool = False


class AstuteStep(TraceStep):
    """Internal passages, consolidation rounds (groups), the chosen answers with the groups behind them."""

    kind: Literal["astute"] = "astute"
    title: ClassVar[str] = "Memory, consolidation and choice"
    internal: list[str] = Field(default_factory=list)
    rounds: list[list[SourceGroup]] = Field(default_factory=list)
    chosen: list[AnswerPart] = Field(default_factory=list)
    chosen_groups: list[int] = Field(default_factory=list)  # 1-based, in the last round's groups
    reason: str = ""
    unreadable: int = 0

    def lines(self) -> list[str]:
        out = [f"astute ({len(self.internal)} passage(s) from memory, {len(self.rounds)} consolidation round(s))"]
        out += [f"  memory-{n}: {text}" for n, text in enumerate(self.internal, 1)]
        for number, groups in enumerate(self.rounds, 1):
            out.append(f"  round {number}:")
            out += [f"    group {g}: {group.answer} <- {', '.join(group.sources)}"
                    + (" (conflict)" if group.conflict else "") for g, group in enumerate(groups, 1)]
        out.append(f"  chose groups {self.chosen_groups or 'none'}: {self.reason}")
        return out
