"""PCAS's trace step (paper 002): the user statement chosen together with the passages."""

from __future__ import annotations

from typing import ClassVar, Literal

from tanglerag.trace import TraceStep


class PersonalContextStep(TraceStep):
    """PCAS: the user statement chosen with the passages, and the combined score of the best pair."""

    kind: Literal["personal_context"] = "personal_context"
    title: ClassVar[str] = "Personal context"
    user: str
    context_id: str | None = None
    text: str | None = None
    score: float | None = None
    lam: float
    beam: int

    def lines(self) -> list[str]:
        chosen = f"{self.text} ({self.context_id}, score {self.score:.3f})" if self.text else "none"
        return [f"personal context of {self.user} (lambda {self.lam}, beam {self.beam}): {chosen}"]

    def headline(self) -> str | None:
        return f"using what we know about {self.user}: {self.text}" if self.text else None
