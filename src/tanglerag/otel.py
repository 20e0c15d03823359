"""Each answer's trace as OpenTelemetry spans, for Phoenix, Langfuse or any OTLP backend (``otel.enabled``, off by
default).

Why after the fact: the typed trace already holds what a tracing backend shows (each stage with its seconds, each LLM
call with its stage, messages, replies, tokens, model seconds and whether the cache served it, each method step),
for ``ask``, ``eval`` and ``serve`` alike, while an eval resumed from its checkpoint or answered on Ray actors has no
live run here to watch. So a finished answer becomes spans: the question, its stages under it, each stage's LLM calls
under that. The trace keeps durations, not clock times, so the spans are laid out from them: the question ends when
it is exported, its stages run one after another in the order they first ran, a fresh call lasts its model seconds
and a cached one takes no time. Attributes follow both conventions backends read: OpenTelemetry GenAI
(``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens``) and
OpenInference (``openinference.span.kind`` CHAIN / RETRIEVER / LLM, ``llm.model_name``, ``llm.token_count.*``,
``input.value`` / ``output.value``, ``retrieval.documents.*``), so Phoenix and Langfuse show the calls as LLM calls
with their tokens. Questions, prompts, replies and passage texts are left out unless ``otel.prompts`` (they may be
private): without it a span carries ids, counts and times only. Method steps are events on the question's span.

No cost when off: nothing of OpenTelemetry is imported unless ``otel.enabled``. The endpoint is the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` (OTLP over HTTP/protobuf; default ``http://localhost:4318``), with
``OTEL_EXPORTER_OTLP_HEADERS`` for a backend's keys, as every OpenTelemetry exporter reads them.

What a span names leaves the process: the model it is given (``URL#model`` for a server) loses the URL's credentials
(``tanglerag.redaction``), prompts or not. A backend that is down costs a command a bounded wait at its exit:
``EXPORT_TIMEOUT_S`` per batch, unless ``OTEL_EXPORTER_OTLP_TIMEOUT`` (or its ``TRACES`` variant) says otherwise.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tanglerag.config import OtelConfig
from tanglerag.outputs import AnswerRecord
from tanglerag.redaction import without_credentials
from tanglerag.trace import LLMCall, Trace
from tanglerag.types import Answer, RetrievedPassage, StageUsage

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

_NS = 1_000_000_000
EXPORT_TIMEOUT_S = 2.0
"""How long the OTLP exporter tries to send a batch, its retries included. The SDK's default, 10 s, held every
``ask`` 7 s at exit when the collector was down; a collector that is up answers in milliseconds."""
_TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")


@dataclass
class Answered:
    """What an answer's spans are made of, from a live ``Answer`` or from an eval prediction read back."""

    question: str
    method: str
    answer: str
    stages: dict[str, StageUsage]
    trace: Trace
    passages: list[RetrievedPassage] = field(default_factory=list)
    id: str | None = None

    @classmethod
    def of(cls, answer: Answer, question_id: str | None = None) -> Answered:
        return cls(answer.question, answer.method, answer.text, dict(answer.usage.stages), answer.trace,
                   list(answer.passages), question_id)

    @classmethod
    def recorded(cls, record: AnswerRecord[RetrievedPassage], question_id: str | None = None) -> Answered:
        """From an eval prediction (its stages' costs are kept as plain numbers)."""
        stages = {name: StageUsage.model_validate(cost) for name, cost in record.usage_by_stage.items()}
        return cls(record.question, record.method, record.answer, stages, record.trace or Trace(),
                   list(record.passages), question_id)


class SpanExport:
    """Spans for finished answers, sent by a processor of their own (not the process's global tracer provider, which
    the application embedding tanglerag may own). ``exporter`` replaces the OTLP one (tests: the SDK's in-memory
    exporter), and is then sent to at once rather than in batches."""

    def __init__(self, config: OtelConfig, exporter: SpanExporter | None = None) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        self.config = config
        self.model = ""
        self.provider: TracerProvider = TracerProvider(resource=Resource.create({"service.name": config.service_name}))
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            told = any(os.environ.get(name) for name in _TIMEOUT_VARIABLES)  # then the SDK reads it
            exporter = OTLPSpanExporter(timeout=None if told else EXPORT_TIMEOUT_S)
            self.provider.add_span_processor(BatchSpanProcessor(exporter))
        else:
            self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        self.tracer: Tracer = self.provider.get_tracer("tanglerag")

    def export(self, answered: Answered, model: str) -> None:
        """Spans for one answer; ``model``: the LLM that answered (as the backend names it)."""
        from opentelemetry import trace

        self.model = without_credentials(model)
        total = sum(cost.seconds for cost in answered.stages.values())
        end = time.time_ns()
        start = end - int(total * _NS)
        root = self.tracer.start_span(f"tanglerag {answered.method}", start_time=start,
                                      attributes=self._question_attributes(answered))
        for step in answered.trace.steps:
            details = {"tanglerag.step.kind": step.kind}
            if self.config.prompts:
                details["tanglerag.step"] = json.dumps(step.model_dump(mode="json"), ensure_ascii=False)
            root.add_event(step.kind, details, timestamp=end)
        context = trace.set_span_in_context(root)
        cursor = start
        for name, cost in answered.stages.items():
            stage_end = cursor + int(cost.seconds * _NS)
            self._stage(name, cost, answered, context, cursor, stage_end)
            cursor = stage_end
        root.end(end_time=end)

    def flush(self) -> None:
        self.provider.force_flush(timeout_millis=int(EXPORT_TIMEOUT_S * 1000))

    def close(self) -> None:
        """Sends what is left, then stops: bounded by the exporter's timeout (see ``EXPORT_TIMEOUT_S``)."""
        self.flush()
        self.provider.shutdown()

    def _question_attributes(self, answered: Answered) -> dict[str, Any]:
        totals = StageUsage()
        for cost in answered.stages.values():
            totals.add(cost)
        attributes: dict[str, Any] = {
            "openinference.span.kind": "CHAIN", "tanglerag.method": answered.method,
            "llm.token_count.prompt": totals.prompt_tokens, "llm.token_count.completion": totals.completion_tokens,
            "llm.token_count.total": totals.prompt_tokens + totals.completion_tokens,
            "tanglerag.llm_calls": totals.llm_calls, "tanglerag.cached_calls": totals.cached_calls,
            "tanglerag.model_seconds": totals.model_seconds}
        if answered.id is not None:
            attributes["tanglerag.question_id"] = answered.id
        if self.config.prompts:
            attributes |= {"input.value": answered.question, "output.value": answered.answer}
        return attributes

    def _stage(self, name: str, cost: StageUsage, answered: Answered, context: Any, start: int, end: int) -> None:
        from opentelemetry import trace

        attributes: dict[str, Any] = {
            "openinference.span.kind": "RETRIEVER" if name == "retrieve" else "CHAIN", "tanglerag.stage": name,
            "llm.token_count.prompt": cost.prompt_tokens, "llm.token_count.completion": cost.completion_tokens,
            "tanglerag.llm_calls": cost.llm_calls, "tanglerag.cached_calls": cost.cached_calls}
        if name == "retrieve":
            attributes |= self._documents(answered.passages)
        span = self.tracer.start_span(name, context=context, start_time=start, attributes=attributes)
        inner = trace.set_span_in_context(span)
        cursor = start
        for call in (c for c in answered.trace.calls if c.stage == name):
            took = 0 if call.cached else int(call.model_seconds * _NS)
            call_start = max(start, min(cursor, end - took))
            self.tracer.start_span(f"chat {self.model}", context=inner, start_time=call_start,
                                   attributes=self._call_attributes(call)).end(end_time=call_start + took)
            cursor = call_start + took
        span.end(end_time=end)

    def _documents(self, passages: list[RetrievedPassage]) -> dict[str, Any]:
        documents: dict[str, Any] = {}
        for i, hit in enumerate(passages):
            documents[f"retrieval.documents.{i}.document.id"] = hit.passage.id
            documents[f"retrieval.documents.{i}.document.score"] = hit.score
            if self.config.prompts:
                documents[f"retrieval.documents.{i}.document.content"] = hit.passage.text
        return documents

    def _call_attributes(self, call: LLMCall) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM", "gen_ai.operation.name": "chat", "gen_ai.request.model": self.model,
            "llm.model_name": self.model, "gen_ai.usage.input_tokens": call.prompt_tokens,
            "gen_ai.usage.output_tokens": call.completion_tokens, "llm.token_count.prompt": call.prompt_tokens,
            "llm.token_count.completion": call.completion_tokens,
            "llm.token_count.total": call.prompt_tokens + call.completion_tokens, "tanglerag.stage": call.stage,
            "tanglerag.cached": call.cached, "tanglerag.model_seconds": call.model_seconds,
            "tanglerag.constrained": call.constrained}
        if self.config.prompts:
            for i, message in enumerate(call.messages):
                attributes[f"llm.input_messages.{i}.message.role"] = message.role
                attributes[f"llm.input_messages.{i}.message.content"] = message.content
            for i, reply in enumerate(call.replies):
                attributes[f"llm.output_messages.{i}.message.role"] = "assistant"
                attributes[f"llm.output_messages.{i}.message.content"] = reply
            attributes["input.value"] = call.messages[-1].content if call.messages else ""
            attributes["output.value"] = call.replies[0] if call.replies else ""
        return attributes


def span_export(config: OtelConfig) -> SpanExport | None:
    """The exporter ``config`` asks for, or None when export is off (then nothing of OpenTelemetry is loaded)."""
    return SpanExport(config) if config.enabled else None
