"""Request and response bodies of the HTTP API (they are the OpenAPI schema clients see)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.index.manifest import IndexManifest
from tanglerag.methods.pcas.store import USER_ID_PATTERN, UserContext
from tanglerag.trace import Trace
from tanglerag.types import AnswerPart

UserId = Annotated[str, Field(pattern=USER_ID_PATTERN, description="letters, digits, '_', '-', '.', '@'")]
OptionValue = str | int | float | bool


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskRequest(_Body):
    question: str = Field(min_length=1, description="the question (at most service.max_question_chars)")
    method: str = Field("concat", description="a name from GET /v1/methods")
    top_k: int | None = Field(None, ge=1, le=100, description="passages retrieved (default: retrieval.top_k)")
    user: UserId | None = Field(None, description="answer with this user's contexts (PCAS)")
    options: dict[str, OptionValue] = Field(
        default_factory=dict, description="method settings for this question, e.g. {\"diva.verification\": \"each\"}",
        examples=[{"corg.graph": "extract"}])


class PassageOut(BaseModel):
    id: str
    title: str
    text: str
    score: float


class UserContextOut(BaseModel):
    id: str
    text: str


class AskResponse(BaseModel):
    question: str
    method: str
    answer: str
    citations: list[str]
    passages: list[PassageOut]
    usage: dict[str, float]
    usage_by_stage: dict[str, dict[str, float]]
    parts: list[AnswerPart] = Field(default_factory=list)
    trace: Trace
    user: str | None = None
    user_context: UserContextOut | None = None


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
    model: str
    running: int
    waiting: int


class IndexInfo(BaseModel):
    manifest: IndexManifest


class AddedDocuments(BaseModel):
    received: int = Field(description="passages in the upload, after chunking")
    added: int = Field(description="passages new to the index")
    already_present: int
    total: int = Field(description="passages in the index now")


class NewContexts(_Body):
    contexts: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(min_length=1, max_length=100)


class ContextList(BaseModel):
    user: str
    contexts: list[UserContext]


class ChatMessageIn(BaseModel):
    """An OpenAI chat message: text content, or a list of content parts whose text parts are read."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI's chat request; fields beyond these (temperature, max_tokens, ...) are accepted and not used."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="tanglerag/<method> (GET /v1/models)", examples=["tanglerag/corg"])
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=200)
    stream: bool = False
    stream_options: dict[str, Any] | None = None


class ChatMessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatMessageOut
    finish_reason: Literal["stop"] = "stop"


class ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: ChatUsage
    tanglerag: dict[str, Any] = Field(description="the answer as POST /v1/ask returns it (citations, passages, "
                                                  "trace), plus ignored_turns: earlier turns no method uses")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "tanglerag"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]
