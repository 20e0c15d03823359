"""Serving OpenAI's chat and legacy completions: a request made into a question, answered, and written as one reply
or as a stream of chunks, for both routes in one place (``routes/chat.py`` only hands requests over).

The reply's content is the answer, one sentence saying where its sources disagree when a conflict report found
that they do, then its numbered sources (with each document's date and source when it gives them), so a chat window
that reads content alone still shows what each ``[n]`` is. The same sources go out as data: ``sources`` on the
message (on the delta that carries the content when streamed, on the choice of a legacy completion), one object a
cited passage (``schemas.Source``), which OpenAI clients ignore and a UI can list. The citations, passages,
conflict reports and the whole trace ride along in the extra ``tanglerag`` field (on the finish chunk when
streamed), and ``usage`` holds our counts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Literal

from fastapi.responses import StreamingResponse

from tanglerag.conflicts import Side
from tanglerag.methods.base import method_classes
from tanglerag.outputs import disagreements
from tanglerag.service import answering, background, chunks, compat
from tanglerag.service.answering import StreamFailure
from tanglerag.service.auth import Caller
from tanglerag.service.chunks import ChunkWriter, TextChunkWriter
from tanglerag.service.compat import JsonReply
from tanglerag.service.progress import progress_line
from tanglerag.service.schemas import (
    AskBody,
    AskResponse,
    ChatAnswer,
    ChatChoice,
    ChatCompletion,
    ChatMessageOut,
    ChatRequest,
    ChatUsage,
    CompletionRequest,
    Source,
    TextChoice,
    TextCompletion,
)
from tanglerag.service.state import ServiceState
from tanglerag.text import SET_ASIDE, after_streamed
from tanglerag.tracking import ProgressEvent

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


@dataclass(frozen=True)
class Reply:
    """What a request asks of its reply besides the answer: JSON instead of prose (``shape``), where to cut it
    (``stop``), and how many earlier turns the follow-up rewrite left unread (reported in ``tanglerag``)."""

    shape: JsonReply | None = None
    stop: str | list[str] | None = None
    ignored: int = 0
    assembled: bool = False
    """whether the method assembles its answer after the call it streams (``Method.answer_is_streamed_text``)"""

    def text(self, output: AskResponse) -> str:
        """The reply's text: the answer with its sources, or the JSON answer asked for; cut at a stop string."""
        return compat.cut_at_stop(self.shape.render(output) if self.shape is not None else content(output), self.stop)

    @property
    def streams_tokens(self) -> bool:
        """Whether the answer's tokens can go out as they are written: not for a JSON reply (its text is made from
        the whole answer), one cut at a stop string (a token may hold text past it) nor an assembled answer (its
        tokens would be followed by the answer again in other words)."""
        return self.shape is None and not self.stop and not self.assembled

    def rest(self, output: AskResponse, streamed: str) -> str:
        """The reply's text after the ``streamed`` tokens (``after_streamed``): its sources and any later line; the
        whole text after a blank line when the method changed what the model wrote (an unknown said in words, a
        citation dropped)."""
        text = self.text(output)
        rest = after_streamed(text, streamed)
        return f"\n\n{text}" if rest is None else rest

    def extra(self, output: AskResponse) -> ChatAnswer:
        """The ``tanglerag`` field: the ``/v1/ask`` body as it is, plus the turns no method reads."""
        return ChatAnswer(**dict(output), ignored_turns=self.ignored)


async def chat_completion(state: ServiceState, body: ChatRequest, who: Caller) -> ChatCompletion | StreamingResponse:
    """The last user message answered with the method the model names (a chat client's background task, such as
    Open WebUI's title, is answered as ``service.background_tasks`` says, without retrieval)."""
    compat.refuse_unsupported(body)
    task = background.recognised(body)
    if task is not None:
        return await background.answered(state, body, task)
    shape = compat.reply_format(body.response_format)
    text, history = compat.conversation(body)
    ask = AskBody(question=text, method=compat.method_for(body.model), history=history)
    shown = state.runtime.settings.service.chat_progress
    if shown == "preamble" and shape is not None:
        shown = "reasoning"  # lines before a JSON answer would make it unreadable
    reply = Reply(shape, body.stop, compat.unread(history, state.runtime.settings.conversation),
                  assembled=_assembles(ask.method))
    stream = _Stream(ChunkWriter(body.model), CHAT_PATH, shown, reply, body.stream_options) if body.stream else None
    output = await _answered(state, ask, who, stream)
    if not isinstance(output, AskResponse):
        return output
    message = ChatMessageOut(content=reply.text(output), sources=sources(output))
    return ChatCompletion(id=f"chatcmpl-{uuid.uuid4().hex}", created=int(time.time()), model=body.model,
                          choices=[ChatChoice(message=message, finish_reason=_finish(output))],
                          usage=ChatUsage.of(output.usage),
                          tanglerag=reply.extra(output))


async def text_completion(state: ServiceState, body: CompletionRequest, who: Caller
                          ) -> TextCompletion | StreamingResponse:
    """OpenAI's legacy completion: the prompt is the question, answered as a chat message is."""
    compat.refuse_unsupported(body)
    ask = AskBody(question=compat.prompt_of(body), method=compat.method_for(body.model))
    reply = Reply(stop=body.stop, assembled=_assembles(ask.method))
    stream = (_Stream(TextChunkWriter(body.model), COMPLETIONS_PATH, "comments", reply, body.stream_options)
              if body.stream else None)
    output = await _answered(state, ask, who, stream)
    if not isinstance(output, AskResponse):
        return output
    return TextCompletion(id=f"cmpl-{uuid.uuid4().hex}", created=int(time.time()), model=body.model,
                          choices=[TextChoice(text=reply.text(output), sources=sources(output),
                                              finish_reason=_finish(output))],
                          usage=ChatUsage.of(output.usage), tanglerag=reply.extra(output))


def _finish(output: AskResponse) -> Literal["stop", "length"]:
    """OpenAI's finish reason: ``length`` for an answer cut at its token budget, so a client can tell."""
    return "length" if output.cut else "stop"


@dataclass(frozen=True)
class _Stream:
    """How a streamed reply is written: its chunk writer, the route (for a late error), how progress is shown
    (``service.chat_progress``; SSE comments alone on a legacy completion), the reply, and ``stream_options``."""

    writer: ChunkWriter
    path: str
    shown: str
    reply: Reply
    options: dict[str, Any] | None


def _assembles(method: str) -> bool:
    """Whether the method asked for (one ``compat.method_for`` found) assembles its answer after its streamed call."""
    return not method_classes()[method].answer_is_streamed_text


async def _answered(state: ServiceState, ask: AskBody, who: Caller,
                    stream: _Stream | None) -> AskResponse | StreamingResponse:
    """The answer, or, for a streamed request, the stream that will carry it (opened once the question is admitted,
    so a full queue is still a plain 429)."""
    asked = answering.prepare(state, ask, who)
    if stream is None:
        return await answering.answered(state, asked, ask)
    running = await answering.started(state, asked, ask)
    events = _events(answering.streamed(state, running), stream)
    return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-store"})


async def _events(items: AsyncGenerator[ProgressEvent | AskResponse | StreamFailure, None],
                  stream: _Stream) -> AsyncIterator[str]:
    """The one stream loop: the opening, the method's progress as ``stream.shown`` says (``progress.py``), the
    content with its sources, the finish with the ``tanglerag`` field, the usage when asked for, then [DONE]."""
    writer = stream.writer
    for event in writer.opening():
        yield event
    preamble, streamed = False, ""
    async with aclosing(items):  # closing early (the client left) cancels the question at once
        async for item in items:
            if isinstance(item, StreamFailure):
                yield chunks.failure(stream.path, item.status, item.error)
                return
            if isinstance(item, ProgressEvent) and item.type == "token":
                if stream.reply.streams_tokens:
                    text = ("\n" if preamble and not streamed else "") + item.data["text"]
                    streamed += text
                    yield writer.chunk({"content": text})
                elif stream.reply.assembled and stream.shown == "reasoning":
                    yield writer.chunk({"reasoning_content": item.data["text"]})
                continue
            if not isinstance(item, AskResponse):
                # once the answer is being written, progress no longer goes into the content or the reasoning
                line = progress_line(item) if stream.shown != "comments" and not streamed else None
                if line is None:
                    yield chunks.comment(f"{item.type} {item.stage}")
                elif stream.shown == "reasoning":
                    yield writer.chunk({"reasoning_content": line + "\n"})
                else:
                    preamble = True
                    yield writer.chunk({"content": f"_{line.strip()}_  \n"})
                continue
            text = stream.reply.rest(item, streamed) if streamed else ("\n" if preamble else "") + stream.reply.text(item)
            yield writer.chunk({"content": text, "sources": [s.model_dump(mode="json") for s in sources(item)]})
            yield writer.chunk({}, _finish(item), tanglerag=stream.reply.extra(item).model_dump(mode="json"))
            if stream.options and stream.options.get("include_usage"):
                yield writer.usage(ChatUsage.of(item.usage))
    yield chunks.DONE


def sources(output: AskResponse) -> list[Source]:
    """The passages the answer cites, numbered as the content's ``[n]`` marks number them (by their place among
    the passages the method was given), with what their documents say of where they come from."""
    cited = set(output.citations)
    return [Source(n=n, **p.model_dump(include={"id", "title", "location", "page", "section", "date", "source"}))
            for n, p in enumerate(output.passages, start=1) if p.id in cited]


def content(output: AskResponse) -> str:
    """The answer, where its sources disagree (if they do), then the sources its [n] marks point to (a passage
    without a title by its id alone, not the id twice; nor its file twice when its location names the file)."""
    listed = [f"[{s.n}] {_named(s)}" + "".join(f" · {about}" for about in (s.location, s.date, s.source) if about)
              for s in sources(output)]
    return output.answer + _disagreement(output) + ("\n\nSources:\n" + "\n".join(listed) if listed else "")


def _named(source: Source) -> str:
    if not source.title:
        return source.id
    in_location = bool(source.location) and source.id.split("#", 1)[0].rsplit("/", 1)[-1] in (source.location or "")
    return source.title if in_location else f"{source.title} ({source.id})"


def _disagreement(output: AskResponse) -> str:
    """One sentence a chat reader sees without opening the report: each side's answer, how many passages state it
    and what became of it ("Sources disagree: 1963 (2 sources) vs 1998 (1 source, rejected: fewer independent sources
    (1 against 2)).");
    empty when the sources agree, or when the answer's own ``Set aside:`` lines already say it (every side but the
    kept one set aside: a chat user read the same conflict twice)."""
    told = SET_ASIDE in output.answer
    points = [" vs ".join(_side(side, report.rule) for side in report.sides)
              for report in disagreements(output.conflicts)
              if not (told and all(side.label in ("kept", "rejected") for side in report.sides))]
    return f"\n\nSources disagree: {'; '.join(points)}." if points else ""


def _side(side: Side, rule: str) -> str:
    count = f"{len(side.passages)} source{'s' * (len(side.passages) != 1)}"
    why = side.note or rule
    verdict = {"kept": "", "disputed": ", disputed", "rejected": f", rejected: {why}" if why else ", rejected",
               "later": f", later: {why}"}
    return f"{side.answer} ({count}{verdict[side.label]})"
