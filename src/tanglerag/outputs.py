"""What an answer looks like outside the process: the JSON of ``ask --json``, eval predictions, ``/v1/ask``,
``search`` and the OpenTelemetry record, one set of models so the outputs cannot drift apart.

Why apart from the pipeline: seven modules (the CLI, the service, the evaluation, telemetry) read these schemas and
none of them runs the pipeline; the schemas need the answer and its trace, not retrieval.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Self, TypeVar

from pydantic import BaseModel, Field, WithJsonSchema

from tanglerag.conflicts import ConflictReport, ConflictStep
from tanglerag.provenance import PATH, places
from tanglerag.trace import Trace
from tanglerag.types import Answer, AnswerPart, RetrievedPassage, Usage
from tanglerag.users import PersonalContextStep
from tanglerag.where import date_text, document_value

Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
"""A count stays an integer and a time a float, as ``Usage.totals`` gives them; JSON Schema's number is both."""

Shown = TypeVar("Shown", bound=BaseModel)

Location = Annotated[str | None, Field(exclude_if=lambda value: value is None, description=(
    "where in its file the passage stands: 'policy-2024.pdf p. 12, §Scope > Limits' (a file's page and heading path)"))]
"""The place fields of a listed passage (``provenance.places`` fills them), left out of the JSON when unknown; one
declaration for every model that lists passages."""
Page = Annotated[int | None, Field(exclude_if=lambda value: value is None, description="the PDF page, 1-based")]
Section = Annotated[list[str] | None, Field(exclude_if=lambda value: value is None, description=(
    "the headings the passage stands under, outermost first"))]


class PassageOut(BaseModel):
    """A retrieved passage as an answer output shows it: flat, with its retrieval score and its document's date and
    source (left out of the output when the document gives none, so an answer without metadata reads as before)."""

    id: str
    title: str
    text: str
    score: float
    date: str | None = Field(None, exclude_if=lambda value: value is None, description=(
        "the document's date, as precisely as it gave it (2024, 2024-05 or 2024-05-03)"))
    source: str | None = Field(None, exclude_if=lambda value: value is None, description=(
        "the document's publisher, site or file"))
    location: Location = None
    page: Page = None
    section: Section = None

    @classmethod
    def from_hit(cls, hit: RetrievedPassage) -> PassageOut:
        """A retrieved passage with the date, source and place in its file its metadata gives (an unreadable one is
        left out: a citation is shown whatever an old index holds)."""
        metadata = hit.passage.metadata
        return cls(id=hit.passage.id, title=hit.passage.title, text=hit.passage.text, score=hit.score,
                   date=date_text(metadata), source=document_value(metadata, "source", {}),
                   **places(metadata))


class SearchPassage(PassageOut):
    """A passage as a search lists it: ``PassageOut`` with the file it comes from, since a search's reader goes to
    the file next (an answer names it through its location and id)."""

    path: str | None = Field(None, exclude_if=lambda value: value is None, description=(
        "the file's path relative to the folder it was indexed from (a file's passages only)"))

    @classmethod
    def from_hit(cls, hit: RetrievedPassage) -> SearchPassage:
        path = hit.passage.metadata.get(PATH)
        return cls(**dict(PassageOut.from_hit(hit)), path=path if isinstance(path, str) and path else None)


class SearchOutput(BaseModel):
    """A search's result as ``tanglerag search --json`` prints it and ``POST /v1/search`` returns it: the ranked
    passages with their provenance and scores, and what retrieving cost (no model call: ``llm_calls`` stays 0)."""

    query: str
    passages: list[SearchPassage]
    usage: dict[str, Number]

    @classmethod
    def from_hits(cls, query: str, hits: list[RetrievedPassage], usage: Usage) -> SearchOutput:
        return cls(query=query, passages=[SearchPassage.from_hit(hit) for hit in hits], usage=usage.totals())


class UserContextOut(BaseModel):
    """The user statement PCAS answered with."""

    id: str
    text: str


class AnswerRecord(BaseModel, Generic[Shown]):
    """What every written-out answer holds, in this key order: ``ask --json``, the service and eval predictions.

    ``Shown`` is how a record shows its passages: an output flattens them to what a reader needs, a prediction
    keeps them whole (the run browser labels them by their metadata).
    """

    question: str
    method: str
    answer: str
    citations: list[str]
    passages: list[Shown]
    usage: dict[str, Number]
    usage_by_stage: dict[str, dict[str, Number]]
    parts: list[AnswerPart] = Field(default_factory=list)
    conflicts: list[ConflictReport] = Field(default_factory=list, description=(
        "where the evidence answers one point in several ways: the kind, the sides with their verdicts and passage "
        "ids, the policies tried and the rule that decided (the method's own report, or conflicts.report's)"))
    trace: Trace | None = None


class AnswerOutput(AnswerRecord[PassageOut]):
    """An answer as ``tanglerag ask --json`` prints it and the service returns it (chat adds one field)."""

    user: str | None = None
    user_context: UserContextOut | None = None
    cut: bool = Field(False, description=(
        "the answer stopped at the method's token budget (methods.answer_tokens for a short answer), not where the "
        "model finished it"))

    @classmethod
    def from_answer(cls, answer: Answer, user: str | None = None, *, trace: bool = False) -> Self:
        """``trace`` keeps every LLM call and method step; ``user`` adds the context PCAS picked for that user."""
        passages = [PassageOut.from_hit(hit) for hit in answer.passages]
        return cls(question=answer.question, method=answer.method, answer=answer.text, citations=answer.citations,
                   passages=passages, usage=answer.usage.totals(),
                   usage_by_stage={name: cost.model_dump() for name, cost in answer.usage.stages.items()},
                   parts=answer.parts, conflicts=conflicts_of(answer.trace), trace=answer.trace if trace else None,
                   user=user or None,
                   user_context=_chosen_context(answer) if user else None, cut=answer.cut)

    def compact(self) -> dict[str, Any]:
        """JSON-ready, without the keys this answer lacks: what ``ask --json`` prints, so a plain answer stays
        short. Left out: ``parts`` and ``conflicts`` when there are none, ``trace`` when not asked for, the user
        fields without one, ``cut`` when the answer was not cut."""
        lacking = set() if self.parts else {"parts"}
        if not self.cut:
            lacking.add("cut")
        if not self.conflicts:
            lacking.add("conflicts")
        if self.trace is None:
            lacking.add("trace")
        if self.user is None:
            lacking |= {"user", "user_context"}
        return self.model_dump(mode="json", exclude=lacking)


def conflicts_of(trace: Trace) -> list[ConflictReport]:
    """The conflict reports of an answer's trace (complementary ones too); empty when nothing reported."""
    step = trace.find(ConflictStep)
    return list(step.reports) if step is not None else []


def disagreements(reports: list[ConflictReport]) -> list[ConflictReport]:
    """The reports where sources disagree: a side rejected or disputed. Answers about different things all stand,
    and two sources that are both right do not disagree."""
    return [report for report in reports if any(side.verdict != "kept" for side in report.sides)]


def _chosen_context(answer: Answer) -> UserContextOut | None:
    """The user statement PCAS put beside the passages; None when it chose none."""
    chosen = answer.trace.find(PersonalContextStep)
    if chosen is None or not chosen.context_id or chosen.text is None:
        return None
    return UserContextOut(id=chosen.context_id, text=chosen.text)
