"""What an evaluation run produces: one prediction per question and method, the per-question result that
engines hand back (answered or failed), and the report that scores them."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tanglerag.outputs import AnswerRecord, conflicts_of
from tanglerag.trace import Trace
from tanglerag.types import RetrievedPassage


class Prediction(AnswerRecord[RetrievedPassage]):
    """One method's answer to one question, scored: a line of ``predictions.jsonl``.

    The answer's own fields are those ``ask --json`` prints (``AnswerRecord``), but the passages are kept whole, with
    the metadata the run browser labels them by, and the trace is always kept.
    """

    # passages and tangles are absent from predictions written before the run browser: it reads such runs too
    passages: list[RetrievedPassage] = Field(default_factory=list, description="what the method was shown")
    trace: Trace = Field(default_factory=Trace)
    id: str
    passage_ids: list[str]
    gold: list[str]
    metrics: dict[str, float | None]
    tangles: list[str] = Field(default_factory=list, description="the question's tangle kinds (QAExample.tangles)")

    @model_validator(mode="after")
    def _conflicts_from_the_trace(self) -> Self:
        """The reports are read from the trace, which a prediction always keeps: an engine need not copy them, and
        predictions written before ``conflicts`` existed show their method's reports too."""
        if not self.conflicts:
            self.conflicts = conflicts_of(self.trace)
        return self


class QuestionResult(BaseModel):
    """One question answered by every method of the run, or the error that stopped it.

    The unit of work engines return and checkpoints store: a failed question is kept with its error so the
    report can count it, and a resumed run tries it again.
    """

    id: str
    predictions: list[Prediction] = Field(default_factory=list)
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


class FailedQuestion(BaseModel):
    id: str
    error: str


class MethodScores(BaseModel):
    method: str
    metrics: dict[str, float | None]
    usage: dict[str, float]
    ci: dict[str, tuple[float, float]] = Field(default_factory=dict, description="95% bootstrap CI per metric")


class EvalReport(BaseModel):
    dataset: str
    n: int = Field(description="questions answered and scored (failed ones are listed in `failed`)")
    results: list[MethodScores]
    failed: list[FailedQuestion] = Field(default_factory=list)
    model_config = ConfigDict(populate_by_name=True)

    # written as "setting" in results.json (the stored runs' key): what the run did, beside its full settings
    protocol: dict[str, Any] = Field(default_factory=dict, validation_alias="setting", serialization_alias="setting")
    settings: dict[str, Any] = Field(default_factory=dict, description="the full settings dump: the run's config")

    def to_output(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude={"failed"} if not self.failed else None)
