"""What the OpenAI-compatible routes honour, what they refuse, and the JSON answer they give when asked for JSON.

A client that sends a parameter we cannot honour must hear so (400, OpenAI's ``unsupported_parameter`` naming the
field) rather than get a reply that looks like it was honoured: ``n`` > 1 (one answer per question),
log-probabilities (an answer is assembled from several calls, so it has none), and on legacy completions ``echo``,
``suffix`` and ``best_of`` > 1; a ``tool_choice`` that obliges a tool call (``required``, a named function) is
refused too (``unsupported_value``), since no method calls tools. Tools offered while the model may choose
(``tool_choice`` absent, ``auto`` or ``none``) are answered without a call, as OpenAI's contract allows. What is
honoured: the model (the method), ``stop`` (the reply is cut before the first stop string, as OpenAI's is), and
``response_format``: ``json_object`` answers with one JSON object ``{"answer", "citations", "conflicts"}`` instead
of prose; ``json_schema`` does too, keeping the properties the schema names, and is refused when the schema requires
a property we cannot fill (we fill no arbitrary schema: that would need another model call whose output the method
did not check).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from tanglerag.config import ConversationConfig
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import AskResponse, ChatRequest, CompletionRequest, served_methods
from tanglerag.stages.followup import Turn, read_turns

log = logging.getLogger(__name__)

PREFIX = "tanglerag/"
TOOL_CHOICES = ("none", "auto", "required")
"""The string values OpenAI gives ``tool_choice`` (``required`` is refused: a reply must then call a tool)."""
JSON_FIELDS = {"answer": "string", "citations": "array", "conflicts": "array"}
"""What a JSON answer holds, with the JSON type of each (a schema asking another type for one is refused)."""


def method_for(model: str) -> str:
    """The method a model names (``tanglerag/<method>``, or the bare name); 404 ``model_not_found`` otherwise."""
    name = model.removeprefix(PREFIX)
    if name not in served_methods():
        raise ServiceError(404, f"unknown model {model!r}: GET /v1/models lists them ({PREFIX}<method>)",
                           code="model_not_found", param="model")
    return name


def _unsupported(param: str, why: str) -> ServiceError:
    return ServiceError(400, f"{param}: {why}", code="unsupported_parameter", param=param)


def refuse_unsupported(body: ChatRequest | CompletionRequest) -> None:
    """400 for the first parameter the request uses that no method can honour."""
    if body.n is not None and body.n > 1:
        raise _unsupported("n", "only 1 is supported: a method gives one answer per question")
    if isinstance(body, CompletionRequest):
        _refuse_legacy(body)
        return
    _check_tools(body)
    if body.logprobs or body.top_logprobs:
        raise _unsupported("logprobs" if body.logprobs else "top_logprobs",
                           "not supported: an answer is assembled from several model calls and has no log-probabilities")


def _check_tools(body: ChatRequest) -> None:
    """Tools offered are answered without a call, as OpenAI's contract allows: a reply with no tool calls (finish
    reason ``stop``) is a valid one while the model may choose (``tool_choice`` absent, ``auto`` or ``none``), and
    chat UIs such as Open WebUI 0.12 offer their built-in tools with every message. A request that obliges a call
    (``required``, a named function) is refused: no reply we give keeps it."""
    for param, choice in (("tool_choice", body.tool_choice), ("function_call", body.function_call)):
        if isinstance(choice, str) and choice not in TOOL_CHOICES:
            raise ServiceError(400, f"{param}: {choice!r} is not one of {', '.join(TOOL_CHOICES)} or an object",
                               code="invalid_value", param=param)
        if not _may_answer_without_a_call(choice):
            raise ServiceError(400, f"{param}: a tool call cannot be made: no method calls tools, so only "
                               "'auto' or 'none' (the tools are offered and not used)",
                               code="unsupported_value", param=param)
    offered = [*(body.tools or []), *(body.functions or [])]
    if offered:
        log.debug("%d tool(s) offered, not used (no method calls tools): %s", len(offered),
                  ", ".join(_tool_name(tool) for tool in offered))


def _may_answer_without_a_call(choice: str | dict[str, Any] | None) -> bool:
    """Whether a ``tool_choice`` (or the deprecated ``function_call``) lets the model answer without calling a tool:
    absent, ``none``, ``auto``, or OpenAI's ``allowed_tools`` object in mode ``auto``."""
    if choice is None or choice in ("none", "auto"):
        return True
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        allowed = choice.get("allowed_tools")
        return isinstance(allowed, dict) and allowed.get("mode") == "auto"
    return False


def _tool_name(tool: dict[str, Any]) -> str:
    inner = tool.get("function")
    return str((inner if isinstance(inner, dict) else tool).get("name", "?"))


def _refuse_legacy(body: CompletionRequest) -> None:
    if body.logprobs is not None:
        raise _unsupported("logprobs", "not supported: an answer has no log-probabilities")
    if body.echo:
        raise _unsupported("echo", "not supported")
    if body.suffix:
        raise _unsupported("suffix", "not supported: answers are not insertions")
    if body.best_of not in (None, 1):
        raise _unsupported("best_of", "only 1 is supported")
    if isinstance(body.prompt, list) and len(body.prompt) != 1:
        raise _unsupported("prompt", "one prompt per request (a string, or a list of one string)")


def conversation(body: ChatRequest) -> tuple[str, list[Turn]]:
    """The question (the last user message with text: one without, such as an image alone, has nothing this can
    read, and the schema can say "some user message has text" but not "the last one has") and its history (the user
    and assistant turns with text before it; system and tool messages are not part of what was said)."""
    last = max((i for i, m in enumerate(body.messages) if m.role == "user" and m.text().strip()), default=None)
    text = body.messages[last].text() if last is not None else ""
    if last is None:
        raise ServiceError(400, "messages: no user message with text to answer", code="invalid_value",
                           param="messages")
    history = read_turns([{"role": m.role, "content": m.text()} for m in body.messages[:last]])
    return text, history


def unread(history: list[Turn], config: ConversationConfig) -> int:
    """Earlier turns the follow-up rewrite does not read."""
    return len(history) if config.rewrite == "never" else max(0, len(history) - config.max_turns)


def prompt_of(body: CompletionRequest) -> str:
    return body.prompt if isinstance(body.prompt, str) else body.prompt[0]


@dataclass(frozen=True)
class JsonReply:
    """An answer as one JSON object: the fields a ``response_format`` asks for (all of ``JSON_FIELDS`` for
    ``json_object``)."""

    fields: tuple[str, ...]

    def render(self, output: AskResponse) -> str:
        values: dict[str, Any] = {"answer": output.answer, "citations": list(output.citations),
                                  "conflicts": [report.model_dump(mode="json") for report in output.conflicts]}
        return json.dumps({name: values[name] for name in self.fields}, ensure_ascii=False)


def reply_format(response_format: dict[str, Any] | None) -> JsonReply | None:
    """None for prose (no ``response_format``, or ``text``); the JSON reply asked for; 400 for one we cannot give."""
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return JsonReply(tuple(JSON_FIELDS))
    if kind != "json_schema":
        raise ServiceError(400, f"response_format.type: {kind!r} is not one of text, json_object, json_schema",
                           code="invalid_value" if kind is not None else "missing_required_parameter",
                           param="response_format.type")
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise ServiceError(400, "response_format.json_schema.schema: a JSON Schema object is required",
                           code="missing_required_parameter", param="response_format.json_schema.schema")
    return JsonReply(_fields_for(schema))


def _fields_for(schema: dict[str, Any]) -> tuple[str, ...]:
    """The answer fields a client's schema names (all of them when it names none), checked against what we give."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return tuple(JSON_FIELDS)
    unknown = [name for name in schema.get("required", properties) if name not in JSON_FIELDS]
    if unknown:
        raise _schema_error(f"requires {', '.join(map(repr, unknown))}, which no method fills; an answer has "
                            f"{', '.join(JSON_FIELDS)}")
    for name, prop in properties.items():
        wanted = prop.get("type") if isinstance(prop, dict) else None
        if name in JSON_FIELDS and wanted is not None and JSON_FIELDS[name] not in (
                wanted if isinstance(wanted, list) else [wanted]):
            raise _schema_error(f"{name!r} is {JSON_FIELDS[name]} in an answer, not {wanted}")
    return tuple(name for name in properties if name in JSON_FIELDS)


def _schema_error(why: str) -> ServiceError:
    return ServiceError(400, f"response_format.json_schema: the schema {why}", code="unsupported_value",
                        param="response_format.json_schema")


def cut_at_stop(text: str, stop: str | list[str] | None) -> str:
    """``text`` up to the first stop string (which is left out, as OpenAI leaves it out)."""
    stops = [stop] if isinstance(stop, str) else (stop or [])
    cuts = [at for at in (text.find(s) for s in stops if s) if at >= 0]
    return text[:min(cuts)] if cuts else text
