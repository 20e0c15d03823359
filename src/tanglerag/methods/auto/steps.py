"""``auto``'s trace step: what the probe measured, the tangle it found, the method it chose and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal, Protocol

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep


class _Answered(Protocol):
    answer: str
    descriptor: str


class ProbedPassage(BaseModel):
    """What the probe's call gave for one passage (numbered as shown to the model, from 1)."""

    number: int
    answer: str
    descriptor: str

    @classmethod
    def listed(cls, per_passage: Mapping[int, _Answered]) -> list[ProbedPassage]:
        return [cls(number=n, answer=r.answer, descriptor=r.descriptor) for n, r in sorted(per_passage.items())]


class AutoStep(TraceStep):
    kind: Literal["auto"] = "auto"
    title: ClassVar[str] = "Tangle and route"
    signals: dict[str, float | int | str] = Field(default_factory=dict)
    tangle: str
    route: str
    why: str
    passages: list[ProbedPassage] = Field(default_factory=list)

    def lines(self) -> list[str]:
        signals = ", ".join(f"{name} {value}" for name, value in self.signals.items())
        return [f"auto: tangle {self.tangle} -> {self.route}", f"  why: {self.why}", f"  signals: {signals}",
                *(f"  [{p.number}] {p.answer} | {p.descriptor}" for p in self.passages)]

    def headline(self) -> str | None:
        return f"tangle: {self.tangle} — {self.why} -> {self.route}"
