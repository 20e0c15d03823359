"""The typed trace of one answer: every LLM call and every decision a method made.

A trace is what ``ask --json --trace``, eval predictions, the service and the inspector show to
explain *why* an answer came out. Calls are recorded by the LLM client, never by a method. Steps are
``TraceStep`` subclasses that live beside the method family (or shared stage) that records them and
register themselves by ``kind``, so a trace read back from JSON is the same typed object and a new
method adds its step without touching this file. A kind nobody registered (a trace written by a newer
version or a plug-in that is not loaded) is kept as an ``UnknownStep`` with its fields, never dropped.
Passages are named by id everywhere; ``number`` is the 1-based position a prompt showed them at.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, SerializeAsAny, WithJsonSchema

from tanglerag.registry import Registry


class Message(BaseModel):
    """One chat message, as sent to a model (and kept in the trace)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class LLMCall(BaseModel):
    """One completion, cached or not, charged to the stage that was running."""

    stage: str
    messages: list[Message]
    replies: list[str]
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    model_seconds: float
    constrained: bool = Field(False, description="the reply was decoded under an output schema (JSON)")
    cut: bool = Field(False, exclude_if=lambda cut: not cut, description=(
        "the reply used its whole token budget (max_tokens): it was cut there, not finished"))


class TraceStep(BaseModel):
    """One decision a method made. Subclasses give ``kind`` a ``Literal`` default; defining the subclass
    registers it, which is all a new step needs. ``lines`` is how the terminal shows it (``trace show``);
    ``headline`` the one line ``ask`` prints, if any."""

    kind: str
    title: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("kind")
        if field is not None and isinstance(field.default, str):
            STEP_TYPES.register(field.default, cls)

    def lines(self) -> list[str]:
        """Plain text (never markup): a title line, then details indented by two spaces."""
        fields = self.model_dump(exclude={"kind"})
        return [self.title or self.kind, *(f"  {name}: {value}" for name, value in fields.items())]

    def headline(self) -> str | None:
        return None


STEP_TYPES: Registry[type[TraceStep]] = Registry("trace step kind")
"""Step classes by ``kind``: a second class claiming a registered kind is refused (its steps would read back as the
first's)."""


class UnknownStep(TraceStep):
    """A step whose kind is not registered in this process; its fields are kept as they came."""

    model_config = ConfigDict(extra="allow")


def _as_step(value: Any) -> TraceStep:
    if isinstance(value, TraceStep):
        return value
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
        raise ValueError("a trace step is an object with a string 'kind'")
    return (STEP_TYPES.find(value["kind"]) or UnknownStep).model_validate(value)


Step = Annotated[
    SerializeAsAny[TraceStep],
    PlainValidator(_as_step),
    WithJsonSchema({"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string"}},
                    "additionalProperties": True}),
]

S = TypeVar("S", bound=BaseModel)


class Trace(BaseModel):
    calls: list[LLMCall] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)

    def find(self, kind: type[S]) -> S | None:
        """The first step of this type, or None."""
        return next((s for s in self.steps if isinstance(s, kind)), None)
