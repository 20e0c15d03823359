"""The LLM client every pipeline uses: backend + cache, one call or many, awaited (``acomplete``, ``adecide``) or,
for synchronous callers, run to its end on the portal loop (``complete``, ``decide``).

Every completion, cached or fresh, is charged to the tracker bound to the work in progress
(``tracking.track``) and appended to its trace here, so no method counts calls by hand.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar, cast

from pydantic import BaseModel

from tanglerag.aio import per_loop, run_sync
from tanglerag.config import StructuredMode, StructuredModes
from tanglerag.errors import LLMError, QuestionCancelled, StructuredOutputUnsupported
from tanglerag.llm.base import Completion, GenerationParams, LLMBackend, RawCompletion
from tanglerag.llm.cache import CallCache, cache_key
from tanglerag.llm.structured import Decision
from tanglerag.trace import Message
from tanglerag.tracking import current_method, current_tracker, token_sink

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Request:
    """One call. ``shown`` (for a JSON reply that is a method's answer) says how the reply reads as the answer while
    it is written, so its tokens can be streamed as text; a text reply is streamed as it is."""

    messages: list[Message]
    params: GenerationParams
    shown: Callable[[str], str] | None = None


class LLM:
    """Cached access to one backend.

    ``use_cache=False`` on the client bypasses the cache globally; the same flag on
    ``complete`` bypasses it for one call (the fresh answer still refreshes the cache).
    """

    def __init__(self, backend: LLMBackend, cache: CallCache | None = None, *, use_cache: bool = True,
                 defaults: GenerationParams | None = None, structured: StructuredMode = "off",
                 structured_stages: StructuredModes | None = None, system_prompt: str = "") -> None:
        self.backend = backend
        self.cache = cache if cache is not None else CallCache(None)
        self.use_cache = use_cache
        self.defaults = defaults if defaults is not None else GenerationParams()
        self.structured = structured
        self.structured_stages = dict(structured_stages or {})
        self.system_prompt = system_prompt
        self._schemas_refused = False  # auto: the backend refused an output schema once, so text from then on
        self._slots = per_loop(lambda: asyncio.Semaphore(max(1, backend.max_concurrency)))
        self._blocking: ThreadPoolExecutor | None = None  # see _agenerate

    def warm_up(self) -> None:
        self.backend.warm_up()

    def params(self, **overrides: object) -> GenerationParams:
        """Defaults from config, with per-call overrides (None values ignored)."""
        values = self.defaults.model_dump()
        values.update({k: v for k, v in overrides.items() if v is not None})
        if isinstance(values.get("stop"), list):
            values["stop"] = tuple(values["stop"])
        return GenerationParams.model_validate(values)

    def complete(self, messages: list[Message], params: GenerationParams | None = None, *,
                 use_cache: bool = True) -> Completion:
        """``acomplete`` for synchronous callers (``tanglerag.aio.run_sync``)."""
        return run_sync(self.acomplete(messages, params, use_cache=use_cache))

    def complete_many(self, requests: list[Request], *, use_cache: bool = True) -> list[Completion]:
        """``acomplete_many`` for synchronous callers."""
        return run_sync(self.acomplete_many(requests, use_cache=use_cache))

    def decide(self, decision: Decision[T], params: GenerationParams | None = None) -> T | None:
        """``adecide`` for synchronous callers."""
        return run_sync(self.adecide(decision, params))

    def decide_many(self, decisions: list[Decision[T]], params: GenerationParams | None = None) -> list[T | None]:
        """``adecide_many`` for synchronous callers."""
        return run_sync(self.adecide_many(decisions, params))

    async def acomplete(self, messages: list[Message], params: GenerationParams | None = None, *,
                        use_cache: bool = True) -> Completion:
        return (await self.acomplete_many([Request(messages, params or self.defaults)], use_cache=use_cache))[0]

    async def acomplete_many(self, requests: list[Request], *, use_cache: bool = True) -> list[Completion]:
        """Several calls at once, at most the backend's concurrency in flight across every question of this event
        loop (one semaphore a loop); results in request order.

        Calls are charged to the tracker in request order, after they finished, so the trace does not depend on
        timing. A question cancelled meanwhile starts none of the calls left (a batch of per-passage calls is most
        of a question); those it made are still charged. Every task runs in the caller's context: the tracker is
        the question's without being handed over."""
        _check_not_cancelled()
        slots = self._slots.get()
        requests = [Request(self._with_system_prompt(r.messages), r.params, r.shown) for r in requests]

        # the answer's own call streams its tokens to a watcher; a batch of several calls is never the answer
        sink = _answer_sink(requests[0]) if len(requests) == 1 else None
        tracker = current_tracker()
        ended = tracker.batch(len(requests)) if tracker is not None and tracker.hears and len(requests) > 1 else None

        async def one(request: Request) -> Completion:
            async with slots:
                _check_not_cancelled()
                completion = await self._acomplete(request.messages, request.params, use_cache, sink)
            if ended is not None:
                ended()
            return completion

        # every call run to its end, its result or exception kept: a batch whose one call failed still charges the
        # calls that were made; cancelling the caller cancels them all
        outcomes = await asyncio.gather(*(one(r) for r in requests), return_exceptions=True)
        for request, outcome in zip(requests, outcomes, strict=True):
            if isinstance(outcome, Completion):
                self._charge(request.messages, request.params, outcome)
        failed = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if isinstance(failed, QuestionCancelled):
            made = sum(isinstance(o, Completion) for o in outcomes)
            raise QuestionCancelled(f"the question was cancelled after {made} of {len(requests)} LLM calls")
        if failed is not None:
            raise failed
        return [o for o in outcomes if isinstance(o, Completion)]

    async def adecide(self, decision: Decision[T], params: GenerationParams | None = None) -> T | None:
        """One decision, constrained to its schema or read from text (see ``llm.structured``)."""
        return (await self.adecide_many([decision], params))[0]

    async def adecide_many(self, decisions: list[Decision[T]],
                           params: GenerationParams | None = None) -> list[T | None]:
        """Several decisions as one batch (``acomplete_many``); ``params`` are the sampling settings, each
        decision brings its own token budget."""
        params, mode = params or self.defaults, self.structured_mode()
        if mode in ("on", "auto"):
            constrained = await self._decide_json(decisions, params, mode)
            if constrained is not None:
                return constrained
        replies = await self.acomplete_many([Request(d.text_messages, d.text_params(params)) for d in decisions])
        read = [d.parse_text(reply.text) for d, reply in zip(decisions, replies, strict=True)]
        if mode == "repair":
            broken = [i for i, (d, reply) in enumerate(zip(decisions, read, strict=True)) if not d.is_whole(reply)]
            repaired = await self._decide_json([decisions[i] for i in broken], params, mode) if broken else None
            for i, reply in zip(broken, repaired or [], strict=False):
                read[i] = reply if reply is not None else read[i]
        return read

    def _with_system_prompt(self, messages: list[Message]) -> list[Message]:
        """``messages`` with ``llm.system_prompt`` as the last line of their system message (one made for it when
        they have none): every method's prompt carries it without each prompt repeating it. Last, not first: put
        before a method's own instructions, it changed what the 1.5B model made of them (COrg's graph of the demo
        question split a third, misread group off); after them, the calls of one step still share their whole
        system message as a prefix."""
        if not self.system_prompt:
            return messages
        if messages and messages[0].role == "system":
            first = messages[0].model_copy(update={"content": f"{messages[0].content}\n{self.system_prompt}"})
            return [first, *messages[1:]]
        return [Message(role="system", content=self.system_prompt), *messages]

    def structured_mode(self) -> StructuredMode:
        """``llm.structured`` for the decisions in progress: the answering method's setting for the stage in
        progress, the stage's, the method's for all its stages, or the one for all (``StructuredModes``)."""
        tracker = current_tracker()
        if tracker is None or not self.structured_stages:
            return self.structured
        by_method = self.structured_stages.get(current_method() or "", {})
        by_stage = by_method.get(tracker.current_stage) if isinstance(by_method, dict) else None
        for mode in (by_stage, self.structured_stages.get(tracker.current_stage), by_method):
            if isinstance(mode, str):
                return mode
        return self.structured

    async def _decide_json(self, decisions: list[Decision[T]], params: GenerationParams,
                     mode: StructuredMode) -> list[T | None] | None:
        """The decisions asked under their schemas; None when the backend takes no schema (so text it is)."""
        if self._schemas_refused:
            return None
        try:
            replies = await self.acomplete_many([Request(d.json_messages, d.json_params(params),
                                                         d.json_view if d.shown is not None else None)
                                                 for d in decisions])
        except StructuredOutputUnsupported as exc:
            if mode == "on":
                raise StructuredOutputUnsupported(f"{exc} (llm.structured=on needs a backend that takes an "
                                                  "output schema; auto and repair fall back to text prompts)") from exc
            log.warning("the %s backend takes no output schema: text prompts from now on (%s)",
                        self.backend.name, exc)
            self._schemas_refused = True
            return None
        return [d.read_json(reply.text) for d, reply in zip(decisions, replies, strict=True)]

    async def _acomplete(self, messages: list[Message], params: GenerationParams, use_cache: bool,
                         sink: Callable[[str], None] | None = None) -> Completion:
        # with the cache off and no file behind it (llm.cache=false) nothing would ever read what is stored: no key
        # to hash, and no copy of every completion held for the rest of the process
        key = cache_key(self.backend.name, self.backend.model_id, messages, params) if (
            self.use_cache or self.cache.path is not None) else None
        on_disk = self.cache.path is not None  # a SQLite read or commit waits on the disk (and on other writers)
        if key is not None and self.use_cache and use_cache:
            hit = await asyncio.to_thread(self.cache.get, key) if on_disk else self.cache.get(key)
            if hit is not None:
                if sink is not None:
                    sink(hit.texts[0])
                return Completion(**hit.model_dump(), cached=True)
        start = time.perf_counter()
        raw = await self._agenerate(messages, params, sink)
        if len(raw.texts) != params.n:  # checked before caching: a malformed reply must not be replayed
            raise LLMError(f"the {self.backend.name} backend returned {len(raw.texts)} completions for n={params.n}")
        raw = raw.model_copy(update={"seconds": time.perf_counter() - start})
        if key is not None:
            await asyncio.to_thread(self.cache.put, key, raw) if on_disk else self.cache.put(key, raw)
        return Completion(**raw.model_dump(), cached=False)

    async def _agenerate(self, messages: list[Message], params: GenerationParams,
                         sink: Callable[[str], None] | None = None) -> RawCompletion:
        """The backend's own coroutine, or its ``generate`` in a worker thread for a backend written without one
        (a plug-in's). With a ``sink``, the backend's streaming form (``astream`` or ``stream``) hands it each piece
        of text as it is written; a backend without one hands over the whole text at the end."""
        if sink is not None and (astream := getattr(self.backend, "astream", None)) is not None:
            return cast(RawCompletion, await astream(messages, params, sink))
        if sink is not None and (stream := getattr(self.backend, "stream", None)) is not None:
            return await self._in_thread(functools.partial(stream, messages, params, sink))
        agenerate = getattr(self.backend, "agenerate", None)
        if agenerate is not None:
            raw = cast(RawCompletion, await agenerate(messages, params))
        else:
            raw = await self._in_thread(functools.partial(self.backend.generate, messages, params))
        if sink is not None and raw.texts:
            sink(raw.texts[0])
        return raw

    async def _in_thread(self, generate: Callable[[], RawCompletion]) -> RawCompletion:
        """A blocking model call in a thread of the client's own pool."""
        if self._blocking is None:
            # threads of its own, not the loop's default executor: a method written with ``run`` waits in a default
            # executor thread on this call, and if this call needed one too, enough such methods at once would take
            # them all and wait forever
            self._blocking = ThreadPoolExecutor(max_workers=max(1, self.backend.max_concurrency) + 2,
                                                thread_name_prefix="tanglerag-generate")
        return await asyncio.get_running_loop().run_in_executor(self._blocking, generate)

    @staticmethod
    def _charge(messages: list[Message], params: GenerationParams, completion: Completion) -> None:
        tracker = current_tracker()
        if tracker is not None:
            tracker.record_call(messages, list(completion.texts), completion.prompt_tokens,
                                completion.completion_tokens, completion.cached, completion.seconds,
                                constrained=params.json_schema is not None,
                                cut=completion.completion_tokens >= params.max_tokens * max(1, len(completion.texts)))


def _answer_sink(request: Request) -> Callable[[str], None] | None:
    """Where the pieces of ``request``'s reply go when it is the answer of a watched question (``token_sink``):
    text as it comes, a JSON reply as its ``shown`` view grows; None otherwise (several samples, JSON nobody reads
    as it comes)."""
    if request.params.n != 1 or (request.params.json_schema is not None and request.shown is None):
        return None
    sink = token_sink()
    if sink is None or request.shown is None:
        return sink
    view, raw, sent = request.shown, [], ""

    def grown(piece: str) -> None:
        nonlocal sent
        raw.append(piece)
        now = view("".join(raw))
        if now.startswith(sent) and len(now) > len(sent):
            sink(now[len(sent):])
            sent = now
    return grown


def _check_not_cancelled() -> None:
    """Stop a cancelled question before it spends another call (the client left, or its time ran out)."""
    tracker = current_tracker()
    if tracker is not None and tracker.cancelled:
        raise QuestionCancelled("the question was cancelled before its next LLM call")
