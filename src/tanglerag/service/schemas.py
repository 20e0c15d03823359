"""Request and response bodies of the HTTP API (they are the OpenAPI schema clients see)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from tanglerag.config import TopK
from tanglerag.index.manifest import IndexManifest
from tanglerag.methods.base import method_classes
from tanglerag.outputs import AnswerOutput, Location, Page, PassageOut, Section
from tanglerag.runtime import DEFAULT_METHOD
from tanglerag.service.options import INTEGRAL, options_model
from tanglerag.stages.followup import Turn
from tanglerag.trace import Trace
from tanglerag.types import AnswerPart
from tanglerag.users import USER_ID_PATTERN, UserContext
from tanglerag.where import MAX_WHERE_CHARS

UserId = Annotated[str, Field(pattern=USER_ID_PATTERN, description="letters, digits, '_', '-', '.', '@'")]
WhereText = Annotated[str, WithJsonSchema({"type": "string", "maxLength": MAX_WHERE_CHARS,
                                           "format": "tanglerag-where"})]
if TYPE_CHECKING:  # a class made at import time: to a type checker, any model
    Options = BaseModel
else:
    Options = options_model()


def served_methods() -> list[str]:
    """Methods a client can ask with (plugins included): an oracle needs an evaluation's gold readings, which no
    request carries."""
    return [name for name, cls in method_classes().items() if not cls.reads_gold_interpretations]


class _Body(BaseModel):
    """A request body: unknown fields are refused, and so is a value of another JSON type (``true`` for a number)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class AskBody(_Body):
    question: str = Field(min_length=1, pattern=r"\S", description="the question (at most service.max_question_chars)")
    method: str = Field(DEFAULT_METHOD, description="a name from GET /v1/methods")
    top_k: Annotated[TopK, INTEGRAL] | None = Field(None, description="passages retrieved (default: retrieval.top_k)")
    user: UserId | None = Field(None, description="answer with this user's contexts (PCAS)")
    history: list[Turn] = Field(default_factory=list, max_length=200, description=(
        "the conversation's earlier turns, oldest first: a question that depends on them (\"and the other one?\") "
        "is first rewritten into a standalone one (conversation.rewrite)"))
    options: Options = Field(
        default_factory=Options, description="method settings for this question, e.g. {\"diva.verification\": "
                                             "\"each\"}; a user key may lower what costs, not raise it")


class SearchBody(_Body):
    query: str = Field(min_length=1, pattern=r"\S", description="what to look for (at most service.max_question_chars)")
    top_k: Annotated[TopK, INTEGRAL] | None = Field(None, description=(
        "passages returned (default: retrieval.top_k; a user key may ask for fewer, not more)"))
    where: WhereText | None = Field(None, max_length=MAX_WHERE_CHARS, description=(
        "only passages whose document metadata passes this filter, as retrieval.where reads it: \"date >= 2024-01-01 "
        "and source in (example.org, 'Le Monde')\""))


class ErrorBody(BaseModel):
    error: str = Field(description="one line saying what is wrong")


class OpenAIErrorDetail(BaseModel):
    """OpenAI's ``Error`` object (its OpenAPI description requires all four keys; ``param`` and ``code`` may be
    null there, and are strings here whenever a field or a reason can be named)."""

    message: str
    type: str
    param: str | None = Field(description="the request field at fault, when one is")
    code: str | None = Field(description="a machine-readable reason: model_not_found, unsupported_parameter, ...")


class OpenAIErrorBody(BaseModel):
    error: OpenAIErrorDetail


_WHY = {
    400: "the request cannot be answered as sent (the message says why)",
    401: "missing or invalid API key",
    403: "this key may not do this",
    404: "no such thing",
    409: "conflicts with the server's state (no index yet, a different document under this id, an unreadable run)",
    413: "the body is larger than service.max_body_bytes (or a file in it was not read within "
         "service.upload_timeout_s)",
    415: "unsupported content type",
    422: "the body or parameters do not match the schema",
    429: "the queue is full; Retry-After says when to try again",
    502: "the LLM server cannot be reached",
    503: "the model failed",
    504: "no answer within service.answer_timeout_s",
}


def error_responses(*codes: int, openai: bool = False) -> dict[int | str, dict[str, Any]]:
    """The documented error responses of a route, each with the body clients get."""
    body = OpenAIErrorBody if openai else ErrorBody
    return {code: {"model": body, "description": _WHY[code]} for code in codes}


class AskResponse(AnswerOutput):
    """The ``POST /v1/ask`` body: the answer as ``ask --json --trace`` prints it, always with its trace (the
    inspector shows why from it), and with every key present; passages clipped at ``service.max_passage_chars``."""

    trace: Trace

    def with_passages_clipped(self, limit: int) -> Self:
        """Every passage as ``passage_clipped`` shows it."""
        return self.model_copy(update={"passages": [passage_clipped(p, limit) for p in self.passages]})


ShownPassage = TypeVar("ShownPassage", bound=PassageOut)


def passage_clipped(p: ShownPassage, limit: int) -> ShownPassage:
    """Every text a passage shows clipped (its title, text, source, location and headings), never its id: what an
    answer or a search returns of a passage."""
    return p.model_copy(update={"title": clipped(p.title, limit), "text": clipped(p.text, limit),
                                "source": p.source and clipped(p.source, limit),
                                "location": p.location and clipped(p.location, limit),
                                "section": p.section and [clipped(h, limit) for h in p.section]})


def clipped(text: str, limit: int) -> str:
    """``text`` as the API returns it: at most ``limit`` characters, then a marker saying how many were left out.
    A passage is whatever the corpus held; a 9 MB one must not make a 9 MB reply, nor vanish without a word."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters not shown: service.max_passage_chars]"


def clipped_all(data: Any, limit: int) -> Any:
    """JSON-ready ``data`` with every string in it clipped (keys are kept): for a reply made of what files held, such
    as an eval run's questions and traces. Clipping is a function of the string, so an id and a citation of it
    still match."""
    if isinstance(data, str):
        return clipped(data, limit)
    if isinstance(data, dict):
        return {key: clipped_all(value, limit) for key, value in data.items()}
    if isinstance(data, list):
        return [clipped_all(value, limit) for value in data]
    return data


class ChatAnswer(AskResponse):
    """A chat completion's extra ``tanglerag`` field: the ``/v1/ask`` body plus the turns left unread."""

    ignored_turns: int = Field(description=(
        "earlier turns not read: beyond the conversation.max_turns the follow-up rewrite reads (all of them with "
        "conversation.rewrite=never)"))


class MethodInfo(BaseModel):
    name: str
    paper: str
    description: str
    calls: str = Field(description="typical LLM calls per question")
    metrics: list[str] = Field(description="what an evaluation scores it with by default")


class Health(BaseModel):
    status: str
    auth: bool
    index: bool
    runs: bool = Field(description="eval runs can be browsed (the server was started with --runs)")
    model: str
    running: int
    waiting: int
    index_version: str | None = Field(None, description="the index version answering (see GET /v1/index)")


class Readiness(BaseModel):
    status: Literal["ready"]
    index: bool = Field(description="an index is loaded (without one, questions get 409 until documents are added)")


class IndexInfo(BaseModel):
    manifest: IndexManifest
    serving: str | None = Field(None, description=(
        "the version this server answers from (the manifest's data folder it loaded; it follows a new one within "
        "service.index_poll_s); None before the first question loads the index"))


class AddedDocuments(BaseModel):
    received: int = Field(description="passages in the upload, after chunking")
    added: int = Field(description="passages new to the index")
    already_present: int = Field(description="passages identical to ones the index holds (skipped)")
    replaced: list[str] = Field(default_factory=list, description="documents whose old text was replaced")
    removed: int = Field(0, description="passages of the replaced documents' old text")
    total: int = Field(description="passages in the index now")


class RemovedDocuments(BaseModel):
    removed: int = Field(description="passages removed (every chunk of the document)")
    total: int = Field(description="passages in the index now")


class DocumentIn(_Body):
    text: str = Field(min_length=1, pattern=r"\S", description="the document's text (long ones are chunked)")
    title: str = ""
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


class NewContexts(_Body):
    contexts: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(min_length=1, max_length=100)


class ContextList(BaseModel):
    user: str
    contexts: list[UserContext]


class ChatMessageIn(BaseModel):
    """An OpenAI chat message: text content, or a list of content parts whose text parts are read."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"] = Field(
        description="OpenAI's roles (function: its deprecated form of tool)")
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")
        return self.content or ""


class _OpenAIRequest(BaseModel):
    """What OpenAI's chat and legacy completion requests share. Fields with a meaning we cannot give (``n`` > 1,
    ``logprobs``, a ``tool_choice`` obliging a call) are declared so that a request using them is refused (400)
    instead of answered as if they were honoured; sampling fields (temperature, top_p, seed, ...) are accepted and
    not used: the method's settings decide them. ``max_tokens`` is type-checked and not used (an answer is not cut
    mid-citation)."""

    model_config = ConfigDict(extra="allow", strict=True)
    model: str = Field(description="tanglerag/<method> (GET /v1/models)", examples=["tanglerag/corg"])
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: Annotated[int, Field(ge=1), INTEGRAL] | None = Field(None, description="only 1: one answer per question", json_schema_extra={"maximum": 1})
    stop: str | list[str] | None = Field(None, description="the reply is cut before the first of these")
    max_tokens: Annotated[int, Field(ge=1), INTEGRAL] | None = Field(None, description="checked, not used")
    temperature: float | None = Field(None, ge=0, le=2, description="accepted, not used")
    top_p: float | None = Field(None, ge=0, le=1, description="accepted, not used")


class ChatRequest(_OpenAIRequest):
    """OpenAI's chat request (``CreateChatCompletionRequest``)."""

    messages: list[ChatMessageIn] = Field(min_length=1, max_length=200, json_schema_extra={
        "contains": {"properties": {"role": {"const": "user"}, "content": {"type": "string", "pattern": r"\S"}},
                     "required": ["role", "content"]}},
        description="the last user message with text is the question; at least one user message has text")
    response_format: dict[str, Any] | None = Field(None, description=(
        "text, json_object, or json_schema whose required properties are among answer, citations, conflicts"),
        json_schema_extra={"anyOf": [{"type": "null"}, {
            "type": "object", "required": ["type"], "properties": {"type": {"enum": ["text", "json_object"]}}}, {
            "type": "object", "required": ["type", "json_schema"], "properties": {
                "type": {"const": "json_schema"}, "json_schema": {
                    "type": "object", "required": ["schema"], "properties": {"schema": {"type": "object"}}}}}]})
    max_completion_tokens: Annotated[int, Field(ge=1), INTEGRAL] | None = Field(None, description="checked, not used")
    # what the schema allows of these is what is not refused (400 unsupported_parameter names the field otherwise)
    logprobs: bool | None = Field(None, description="refused when true", json_schema_extra={"enum": [False, None]})
    top_logprobs: Annotated[int, INTEGRAL] | None = Field(None, description="refused", json_schema_extra={"enum": [0, None]})
    tools: list[dict[str, Any]] | None = Field(None, description="offered tools are not called: the answer has none")
    tool_choice: str | dict[str, Any] | None = Field(
        None, description="'auto' or 'none' (or allowed_tools in mode auto); one obliging a call is refused",
        json_schema_extra={"anyOf": [{"enum": ["none", "auto", None]}, {
            "type": "object", "required": ["type", "allowed_tools"], "properties": {
                "type": {"const": "allowed_tools"}, "allowed_tools": {
                    "type": "object", "required": ["mode"], "properties": {"mode": {"const": "auto"}}}}}]})
    functions: list[dict[str, Any]] | None = Field(None, description="the deprecated form of tools, not called")
    function_call: str | dict[str, Any] | None = Field(None, description="'auto' or 'none'; a named one is refused",
                                                       json_schema_extra={"enum": ["none", "auto", None]})


Prompt = Annotated[str, Field(pattern=r"\S")]


class CompletionRequest(_OpenAIRequest):
    """OpenAI's legacy completion request (``CreateCompletionRequest``): the prompt is the question."""

    prompt: Prompt | list[Prompt] = Field(description="the question (a list of one string is read as that string)",
                                          json_schema_extra={"anyOf": [{"type": "string", "pattern": r"\S"}, {
                                              "type": "array", "minItems": 1, "maxItems": 1,
                                              "items": {"type": "string", "pattern": r"\S"}}]})
    logprobs: Annotated[int, INTEGRAL] | None = Field(None, description="refused", json_schema_extra={"enum": [None]})
    echo: bool | None = Field(None, description="refused when true", json_schema_extra={"enum": [False, None]})
    suffix: str | None = Field(None, description="refused", json_schema_extra={"enum": ["", None]})
    best_of: Annotated[int, INTEGRAL] | None = Field(None, description="only 1", json_schema_extra={"enum": [1, None]})


def _absent(value: object) -> bool:
    return value is None


class Source(BaseModel):
    """One passage the answer cites, as a chat UI lists it beside the reply: the ``[n]`` that marks it in the
    content and where it comes from. An extra field OpenAI clients ignore (the ``openai`` SDK keeps it in
    ``model_extra``), so a UI reads sources as data instead of parsing the "Sources:" lines of the content. Keys a
    document does not give are left out, as in ``tanglerag.passages``."""

    n: int = Field(description="the number its [n] mark has in the content (its place among the passages)")
    id: str = Field(description="the passage id (tanglerag.passages holds its text)")
    title: str
    location: str | None = Field(None, exclude_if=_absent, description="where in its file: 'a.pdf p. 12, §Scope'")
    page: int | None = Field(None, exclude_if=_absent, description="the PDF page, 1-based")
    section: list[str] | None = Field(None, exclude_if=_absent, description="the headings it stands under")
    date: str | None = Field(None, exclude_if=_absent, description="the document's date (2024, 2024-05, 2024-05-03)")
    source: str | None = Field(None, exclude_if=_absent, description="the document's publisher, site or file")


SOURCES_DOC = ("the passages the answer cites, in the order of their [n] marks: id, title and, when the document "
               "gives them, location, page, section, date, source (an extra field OpenAI clients ignore; empty for a "
               "chat client's background task)")


class ChatMessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: None = None
    sources: list[Source] = Field(default_factory=list, description=SOURCES_DOC)


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatMessageOut
    logprobs: None = None
    finish_reason: Literal["stop", "length"] = Field("stop", description=(
        "length: the answer stopped at its token budget (methods.answer_tokens), as OpenAI says of a cut reply"))


class ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int

    @classmethod
    def of(cls, totals: dict[str, float]) -> ChatUsage:
        """OpenAI's usage from our totals (an answer's ``usage``, a tracker's ``usage.totals()``)."""
        prompt, completion = int(totals["prompt_tokens"]), int(totals["completion_tokens"])
        return cls(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: ChatUsage
    tanglerag: ChatAnswer | None = Field(description=(
        "the answer as POST /v1/ask returns it (citations, passages, trace), plus ignored_turns: earlier turns not "
        "read; null for a chat client's background task (a title, tags), which is not a question"))


class TextChoice(BaseModel):
    text: str
    index: int = 0
    logprobs: None = None
    finish_reason: Literal["stop", "length"] = "stop"
    sources: list[Source] = Field(default_factory=list, description=SOURCES_DOC)


class TextCompletion(BaseModel):
    """OpenAI's legacy ``text_completion`` (``CreateCompletionResponse``)."""

    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    choices: list[TextChoice]
    usage: ChatUsage
    tanglerag: ChatAnswer = Field(description="the answer as POST /v1/ask returns it")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = Field(description="when this server started serving it (Unix seconds)")
    owned_by: str = "tanglerag"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class RunPassage(BaseModel):
    id: str
    title: str
    text: str = Field(description="empty for runs written before predictions kept the passages")
    score: float | None
    label: str = Field(description="the dataset's own label of the passage, e.g. RAMDocs' correct / misinfo / noise")
    location: Location = None
    page: Page = None
    section: Section = None


class RunAnswer(BaseModel):
    """One method's prediction, shaped like an ``/v1/ask`` answer (so the inspector shows both alike)."""

    method: str
    answer: str
    citations: list[str]
    passages: list[RunPassage]
    metrics: dict[str, float | None]
    usage: dict[str, float]
    usage_by_stage: dict[str, dict[str, float]]
    parts: list[AnswerPart]
    trace: Trace


class RunQuestion(BaseModel):
    run: str
    id: str
    question: str
    gold: list[str]
    tangles: list[str]
    answers: list[RunAnswer]
