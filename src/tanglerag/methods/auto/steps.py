"""``auto``'s trace step: what the probe measured, the tangle it read, the method it chose and why."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tanglerag.trace import TraceStep


class AutoStep(TraceStep):
    kind: Literal["auto"] = "auto"
    title: ClassVar[str] = "Tangle and route"
    signals: dict[str, float | int | str] = Field(default_factory=dict)
    tangle: str
    route: str
    why: str

    def lines(self) -> list[str]:
        signals = ", ".join(f"{name} {value}" for name, value in self.signals.items())
        return [f"auto: tangle {self.tangle} -> {self.route}", f"  why: {self.why}", f"  signals: {signals}"]

    def headline(self) -> str | None:
        return f"tangle: {self.tangle} — {self.why} -> {self.route}"
