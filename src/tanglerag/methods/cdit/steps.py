"""CDIT's trace step (paper 003): each retrieved passage judged against the question, and what was recorded."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import TraceStep


class Judgment(BaseModel):
    passage_id: str
    consistent: bool | None  # None: the judge's reply could not be read (the passage is kept)


class CditStep(TraceStep):
    """CDIT: each retrieved passage judged against the question, what was discarded, the witnesses recorded."""

    kind: Literal["cdit"] = "cdit"
    title: ClassVar[str] = "CDIT: consistency judgments"
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


    def lines(self) -> list[str]:
        out = [f"CDIT ({self.judge}; answered by {self.answer_method}): discarded {', '.join(self.discarded) or 'nothing'}"]
        out += [f"  {j.passage_id}: "
                f"{'unreadable, kept' if j.consistent is None else 'matches' if j.consistent else 'does not match'}"
                for j in self.judgments]
        if self.recorded:
            out.append(f"  {self.witnesses_added} witnesses recorded; separated now: {len(self.separated_now)}")
        return out
