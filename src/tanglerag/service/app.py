"""The FastAPI application: one warmed runtime, bounded admission, API keys, and the web inspector.

Blocking work (the LLM, embedding, index writes) runs in worker threads; the event loop only admits,
streams and answers. A question holds its slot until its thread finishes, even when the client has
gone away or timed out, so the bound on concurrent model work is never exceeded.

>>> app = create_app(Runtime(settings, index_dir=Path("my-index")))  # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
"""


import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tanglerag.errors import (
    ContextStoreError,
    IndexStoreError,
    InputError,
    ModelError,
    ServerUnreachableError,
    TangleragError,
)
from tanglerag.index.passage_index import read_manifest, store_passages
from tanglerag.ingest import chunk_passages, passages_from_upload
from tanglerag.methods.registry import METHODS, method_class
from tanglerag.personal.store import check_user_id
from tanglerag.pipeline import answer_output
from tanglerag.runtime import Runtime
from tanglerag.service.auth import ApiKeys, Caller
from tanglerag.service.gate import Busy, Gate
from tanglerag.service.options import with_options
from tanglerag.service.schemas import (
    AddedDocuments,
    AskRequest,
    AskResponse,
    ContextList,
    Health,
    IndexInfo,
    MethodInfo,
    NewContexts,
    UserContext,
)
from tanglerag.service.telemetry import Telemetry
from tanglerag.tracking import ProgressEvent, Tracker
from tanglerag.types import Answer, Passage, Question

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json", "text/plain")


class ServiceError(Exception):
    """An HTTP error with a one-line message (the body is ``{"error": message}``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


def _status(exc: TangleragError) -> int:
    if isinstance(exc, ServerUnreachableError):
        return 502
    if isinstance(exc, ModelError):
        return 503
    if isinstance(exc, IndexStoreError):
        return 409
    return 400


class _BodyLimit:
    """413 for bodies over the limit, whether the client declares the length or streams chunks."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _too_large(self.max_bytes)(scope, receive, send)
            return
        if declared is not None:
            await self.app(scope, receive, send)  # servers stop reading at the declared length
            return
        # a streamed body: read it all (up to the limit) before the app sees any of it
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await _too_large(self.max_bytes)(scope, receive, send)
                return
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse({"error": f"request body is larger than {limit} bytes"}, status_code=413)


def create_app(runtime: Runtime, keys: ApiKeys | None = None, *, warm_up: bool = True) -> FastAPI:
    """The service over ``runtime`` (its index folder is where documents are added)."""
    cfg = runtime.settings.service
    keys = keys if keys is not None else ApiKeys({})
    telemetry = Telemetry()
    gate = Gate(cfg.max_running, cfg.max_waiting, cfg.queue_timeout_s)
    index_writes = asyncio.Lock()
    state: dict[str, Runtime] = {"runtime": runtime}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            await asyncio.to_thread(runtime.warm_up, has_index())
        log.info("tanglerag service ready (%s)", "API keys required" if keys.enabled else "no API keys: loopback only")
        yield

    # no /docs or /redoc: FastAPI serves their scripts from a CDN, which an offline machine cannot reach
    app = FastAPI(title="tanglerag", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Answers from tangled contexts, with citations and a trace of why.")
    app.add_middleware(_BodyLimit, max_bytes=cfg.max_body_bytes)

    @app.middleware("http")
    async def measure(request: Request, call_next: Callable) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        telemetry.observe_request(getattr(route, "path", "unmatched"), response.status_code,
                                  time.perf_counter() - start)
        return response

    @app.exception_handler(ServiceError)
    async def service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(TangleragError)
    async def user_error(_: Request, exc: TangleragError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=_status(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        return JSONResponse({"error": f"{where}: {first['msg']}", "detail": json.loads(json.dumps(
            exc.errors(), default=str))}, status_code=422)

    def caller(authorization: Annotated[str | None, Header()] = None) -> Caller:
        found = keys.identify(authorization)
        if found is None:
            raise ServiceError(401, "missing or invalid API key: send 'Authorization: Bearer KEY'",
                               {"WWW-Authenticate": "Bearer"})
        return found

    def admin(who: Annotated[Caller, Depends(caller)]) -> Caller:
        if not who.admin:
            raise ServiceError(403, "this needs an admin key")
        return who

    def acting_as(user: str, who: Caller) -> str:
        try:
            check_user_id(user)
        except ContextStoreError as exc:
            raise ServiceError(422, str(exc)) from None
        if not who.may_act_as(user):
            raise ServiceError(403, f"this key may not act as user {user!r}")
        return user

    def has_index() -> bool:
        folder = state["runtime"].index_dir
        return folder is not None and (folder / "manifest.json").exists()

    # -- asking -------------------------------------------------------------------------------
    def prepare(body: AskRequest, who: Caller) -> tuple[Runtime, Question]:
        if len(body.question) > cfg.max_question_chars:
            raise ServiceError(422, f"question: longer than {cfg.max_question_chars} characters")
        if body.user is not None:
            acting_as(body.user, who)
        method_class(body.method)
        if not has_index():
            raise ServiceError(409, "no index yet: POST documents to /v1/index/documents first")
        options = dict(body.options)
        if body.top_k is not None:
            options["retrieval.top_k"] = body.top_k
        base = state["runtime"]
        rt = base.with_settings(with_options(base.settings, options)) if options else base
        try:
            question = Question(text=body.question, user_id=body.user)
        except ValidationError as exc:
            raise ServiceError(422, f"question: {exc.errors()[0]['msg']}") from None
        return rt, question

    def answer_with(rt: Runtime, body: AskRequest, question: Question, tracker: Tracker) -> Answer:
        return rt.pipeline(body.method, personal=body.user is not None).ask(question, tracker=tracker)

    async def admitted(work: Callable[[], Any]) -> asyncio.Future:
        """Start ``work`` in a thread once a slot is free; the slot is freed when the thread ends."""
        try:
            await gate.acquire()
        except Busy as exc:
            telemetry.rejected.inc()
            raise ServiceError(429, f"busy: {exc}; retry later", {"Retry-After": str(exc.retry_after)}) from None
        telemetry.in_flight.inc()
        future = asyncio.get_running_loop().run_in_executor(None, work)

        def done(_: asyncio.Future) -> None:
            telemetry.in_flight.dec()
            gate.release()

        future.add_done_callback(done)
        return future

    def finished(answer: Answer, user: str | None) -> dict[str, Any]:
        telemetry.observe_usage(answer.usage)
        return answer_output(answer, user, trace=True)

    @app.post("/v1/ask", response_model=AskResponse, tags=["ask"],
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "the answer, or with stream=true server-sent events: "
                                              "stage_start, stage_end, llm_call, step, then answer (or error)"}})
    async def ask(body: AskRequest, who: Annotated[Caller, Depends(caller)],
                  stream: Annotated[bool, Query(description="stream progress as server-sent events")] = False):
        """Answer a question with citations and the trace of how the method got there."""
        rt, question = prepare(body, who)
        if stream:
            return await _stream(rt, body, question)
        future = await admitted(lambda: answer_with(rt, body, question, Tracker()))
        try:
            answer = await asyncio.wait_for(asyncio.shield(future), cfg.answer_timeout_s)
        except TimeoutError:
            raise ServiceError(504, f"no answer within {cfg.answer_timeout_s:g}s") from None
        return finished(answer, body.user)

    async def _stream(rt: Runtime, body: AskRequest, question: Question) -> StreamingResponse:
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[ProgressEvent] = asyncio.Queue()
        tracker = Tracker(on_event=lambda event: loop.call_soon_threadsafe(events.put_nowait, event))
        future = await admitted(lambda: answer_with(rt, body, question, tracker))

        async def sse() -> AsyncIterator[str]:
            deadline = loop.time() + cfg.answer_timeout_s
            while not (future.done() and events.empty()):
                getter = asyncio.ensure_future(events.get())
                await asyncio.wait({getter, future}, timeout=max(0.0, deadline - loop.time()),
                                   return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    event = getter.result()
                    yield _sse(event.type, event.model_dump(mode="json"))
                else:
                    getter.cancel()
                if loop.time() >= deadline and not future.done():
                    yield _sse("error", {"error": f"no answer within {cfg.answer_timeout_s:g}s", "status": 504})
                    return
            exc = future.exception()
            if exc is None:
                yield _sse("answer", finished(future.result(), body.user))
            elif isinstance(exc, TangleragError):
                yield _sse("error", {"error": str(exc), "status": _status(exc)})
            else:
                log.error("answering failed", exc_info=exc)
                yield _sse("error", {"error": "internal error (logged on the server)", "status": 500})

        return StreamingResponse(sse(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    @app.get("/v1/methods", response_model=list[MethodInfo], tags=["ask"])
    async def methods() -> list[MethodInfo]:
        """Every method, its paper, what it does and what it typically costs."""
        return [MethodInfo(name=cls.name, paper=cls.paper, summary=cls.summary, calls=cls.calls,
                           metrics=list(cls.default_metrics)) for cls in METHODS.values()]

    # -- the index ----------------------------------------------------------------------------
    @app.get("/v1/index", response_model=IndexInfo, tags=["index"])
    async def index_info(_: Annotated[Caller, Depends(caller)]) -> IndexInfo:
        """The manifest of the index being served."""
        if not has_index():
            raise ServiceError(404, "no index yet: POST documents to /v1/index/documents first")
        return IndexInfo(manifest=read_manifest(state["runtime"].index_dir))

    @app.post("/v1/index/documents", response_model=AddedDocuments, tags=["index"], openapi_extra={
        "requestBody": {"required": True, "content": {
            "application/x-ndjson": {"schema": {"type": "string", "description": "JSONL: {id, text, title?}"}},
            "multipart/form-data": {"schema": {"type": "object", "properties": {
                "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}}})
    async def add_documents(request: Request, _: Annotated[Caller, Depends(admin)]) -> AddedDocuments:
        """Add passages (a JSONL body, or uploaded .jsonl/.txt/.md files) to the index; saved atomically."""
        folder = state["runtime"].index_dir
        if folder is None:
            raise ServiceError(409, "the service was started without --index: it has nowhere to add documents")
        passages = await _uploaded_passages(request)
        rt = state["runtime"]
        cfg_index = rt.settings.index
        chunks = chunk_passages(passages, "upload", chunk_size=cfg_index.chunk_words,
                                chunk_overlap=cfg_index.chunk_overlap)
        async with index_writes:
            index, added = await asyncio.to_thread(store_passages, folder, chunks, rt.embedder, cfg_index)
            rt.replace_index(index)
        return AddedDocuments(received=len(chunks), added=added, already_present=len(chunks) - added,
                              total=index.manifest().count)

    # -- users' contexts ----------------------------------------------------------------------
    @app.get("/v1/users/{user}/contexts", response_model=ContextList, tags=["users"])
    async def list_contexts(user: str, who: Annotated[Caller, Depends(caller)]) -> ContextList:
        """A user's context statements (only that user's key, or an admin key)."""
        acting_as(user, who)
        contexts = await asyncio.to_thread(state["runtime"].context_store.list, user)
        return ContextList(user=user, contexts=contexts)

    @app.post("/v1/users/{user}/contexts", response_model=list[UserContext], status_code=201, tags=["users"])
    async def add_contexts(user: str, body: NewContexts, who: Annotated[Caller, Depends(caller)]) -> list[UserContext]:
        """Add statements about the user; each gets an id."""
        acting_as(user, who)
        return await asyncio.to_thread(state["runtime"].context_store.add, user, body.contexts)

    @app.delete("/v1/users/{user}/contexts", status_code=204, tags=["users"])
    async def remove_context(user: str, who: Annotated[Caller, Depends(caller)],
                             id: Annotated[str, Query(min_length=1, max_length=64, description="the statement's id")]
                             ) -> Response:
        """Remove one statement by id."""
        acting_as(user, who)
        try:
            await asyncio.to_thread(state["runtime"].context_store.remove, user, id)
        except ContextStoreError as exc:
            raise ServiceError(404, str(exc)) from None
        return Response(status_code=204)

    # -- operations ---------------------------------------------------------------------------
    @app.get("/healthz", response_model=Health, tags=["operations"])
    async def health() -> Health:
        return Health(status="ok", auth=keys.enabled, index=has_index(),
                      model=state["runtime"].llm.backend.model_id, running=gate.running, waiting=gate.waiting)

    @app.get("/metrics", tags=["operations"], response_class=Response,
             responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}})
    async def metrics() -> Response:
        return Response(telemetry.render(), media_type="text/plain; version=0.0.4")

    @app.get("/", include_in_schema=False)
    async def inspector() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


async def _uploaded_passages(request: Request) -> list[Passage]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await request.form()
        uploads = form.getlist("files")
        if not uploads:
            raise InputError("multipart upload holds no 'files' field")
        passages: list[Passage] = []
        for upload in uploads:
            if isinstance(upload, str):
                raise InputError("'files' must be uploaded files, not text fields")
            passages += passages_from_upload(upload.filename or "upload.jsonl", await upload.read())
        return passages
    if kind in JSONL_TYPES or not kind:
        return passages_from_upload("body.jsonl", await request.body())
    raise ServiceError(415, f"unsupported content type {kind!r}: send JSONL (application/x-ndjson) or "
                            "multipart/form-data files")


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
