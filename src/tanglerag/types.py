"""Typed data model shared by every stage, method and output format.

Pydantic models validate records at the boundary (files, HTTP, CLI), so a missing
field fails with a message naming it instead of a KeyError deep in a pipeline.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tanglerag.trace import Trace


def record_id(value: Any) -> str:
    """An id read from a file: a non-empty string, or an integer written as one (never null, a bool or a list).

    Raises ValueError; readers add the file and line.
    """
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise ValueError(f"'id' must be a non-empty string or an integer, got {value!r}")
    return str(value)


class Passage(BaseModel):
    """A unit of retrievable text."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str = ""
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("passage text is empty")
        return value


class RetrievedPassage(BaseModel):
    """A passage with the score and rank it got from a retriever."""

    passage: Passage
    score: float
    rank: int


class Question(BaseModel):
    """A question, optionally tied to a user and that user's context statements."""

    text: str
    id: str = ""
    user_id: str | None = None
    user_contexts: list[str] = Field(default_factory=list)
    interpretations: list[str] = Field(
        default_factory=list, description="readings known in advance: the gold ones in an oracle evaluation")

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # a byte that was not UTF-8 on a command line, a lone \ud800 in JSON
            raise ValueError(f"question holds {value[exc.start]!r} at character {exc.start}, which is not UTF-8 text "
                             "(a byte of another encoding, or half of a UTF-16 pair)") from None
        return value.strip()


class AnswerPart(BaseModel):
    """One piece of a structured answer, e.g. the answer for one entity group."""

    answer: str
    descriptor: str = ""
    citations: list[str] = Field(default_factory=list)
    group: int | None = None


class StageUsage(BaseModel):
    """Cost of one pipeline stage.

    ``llm_calls`` counts requests that reached the model; ``cached_calls`` those served
    from the cache. Tokens and ``model_seconds`` count both, because they measure what the
    method costs, not what this particular run paid; ``seconds`` is this run's wall time.
    """

    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    seconds: float = 0.0

    def add(self, other: StageUsage) -> None:
        self.llm_calls += other.llm_calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.model_seconds += other.model_seconds
        self.seconds += other.seconds

    @property
    def total_calls(self) -> int:
        return self.llm_calls + self.cached_calls


class Usage(BaseModel):
    """Cost per stage plus the total."""

    stages: dict[str, StageUsage] = Field(default_factory=dict)

    @property
    def total(self) -> StageUsage:
        total = StageUsage()
        for stage in self.stages.values():
            total.add(stage)
        return total

    def totals(self) -> dict[str, float | int]:
        """The flat form the CLI's JSON outputs promise."""
        total = self.total
        return {
            "llm_calls": total.llm_calls,
            "cached_calls": total.cached_calls,
            "prompt_tokens": total.prompt_tokens,
            "completion_tokens": total.completion_tokens,
            "model_seconds": round(total.model_seconds, 6),
            "seconds": round(total.seconds, 6),
        }


class Answer(BaseModel):
    """What a method returns for one question."""

    question: str
    method: str
    text: str
    citations: list[str] = Field(default_factory=list)
    passages: list[RetrievedPassage] = Field(default_factory=list)
    parts: list[AnswerPart] = Field(default_factory=list)
    is_unknown: bool = False
    usage: Usage = Field(default_factory=Usage)
    trace: Trace = Field(default_factory=Trace)

    @property
    def cut(self) -> bool:
        """Whether the model's last reply (the one that wrote the answer) stopped at its token budget rather than
        finishing: the answer may end mid-sentence, and a person or a client must be told."""
        return bool(self.trace.calls) and self.trace.calls[-1].cut
