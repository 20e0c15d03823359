"""How the service fails: one ``{"error": message}`` body, the status a user error maps to, and the body limit.

On the OpenAI-compatible routes the message sits where OpenAI's clients read it, ``{"error": {"message": ...}}``,
so an SDK's exception says what is wrong rather than only the status code.

Every message a caller sees of a failure (an HTTP body, an SSE ``error`` event, a chat stream's error) comes from
``client_message``: the kind of failure and what to do, never a URL, a path, a key or a model server's raw reply;
those go to the server's log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from tanglerag.errors import (
    IndexStoreError,
    LLMError,
    ModelError,
    ServerUnreachableError,
    StructuredOutputUnsupported,
    TangleragError,
)
from tanglerag.service.asgi import replaying
from tanglerag.service.redaction import Redactor

log = logging.getLogger(__name__)


class ServiceError(Exception):
    """An HTTP error with a one-line message (the body is ``{"error": message}``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


def status_for(exc: TangleragError) -> int:
    if isinstance(exc, ServerUnreachableError):
        return 502
    if isinstance(exc, ModelError):
        return 503
    if isinstance(exc, IndexStoreError):
        return 409
    return 400


OPENAI_PATHS = {"/v1/chat/completions", "/v1/models"}


def error_body(path: str, message: str, status: int) -> dict[str, Any]:
    """The body of an error at ``path``: OpenAI's shape on its routes, ours elsewhere."""
    if path in OPENAI_PATHS:
        return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                          "code": status}}
    return {"error": message}


def install_error_handlers(app: FastAPI, routes: Sequence[BaseRoute], redact: Redactor) -> None:
    """Our error shape for every error; ``routes`` are the API's, for the ``Allow`` header of a 405; ``redact``
    takes the server's paths out of a user error's message."""

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(error_body(request.url.path, str(exc), exc.status), status_code=exc.status,
                            headers=exc.headers)

    @app.exception_handler(TangleragError)
    async def user_error(request: Request, exc: TangleragError) -> JSONResponse:
        return JSONResponse(error_body(request.url.path, client_message(exc, redact), status_for(exc)),
                            status_code=status_for(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        """Starlette's own refusals (no such path, wrong method, unreadable body) in our error shape."""
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(request, routes))
        message = {404: f"no such path: {request.url.path}", 405: f"{request.method} is not allowed here"}
        return JSONResponse(error_body(request.url.path, message.get(exc.status_code, str(exc.detail)),
                                       exc.status_code),
                            status_code=exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        body = error_body(request.url.path, f"{where}: {first['msg']}", 422)
        return JSONResponse(body | {"detail": json.loads(json.dumps(exc.errors(), default=str))}, status_code=422)


_DETAILS = "the server's log has the details"
_MODEL_FAILURES: list[tuple[type[ModelError], str]] = [  # most specific first
    (ServerUnreachableError, "the LLM server cannot be reached: try again later; if it lasts, tell the operator"),
    (StructuredOutputUnsupported, ("the LLM server does not take the output schema this method sends: tell the "
                                   "operator (llm.structured)")),
    (LLMError, ("the LLM failed on this question: try again, or with fewer passages (top_k) if the prompt may be "
                "too long; if it lasts, tell the operator")),
    (ModelError, "a model could not be loaded on the server: tell the operator"),
]


def client_message(exc: TangleragError, redact: Redactor) -> str:
    """What a caller is told of ``exc``; the whole message goes to the log when the caller's is not all of it.

    A model's failure is told by its kind only: its message holds the server's address and its raw reply, which
    no redaction can be sure to clean. Any other error keeps its message, with URLs and server paths taken out."""
    kind = next((told for cls, told in _MODEL_FAILURES if isinstance(exc, cls)), None)
    if kind is not None:
        log.error("%s (the client was told: %s)", " ".join(str(exc).split()), kind)
        return f"{kind} ({_DETAILS})"
    told = redact(str(exc))
    if told != str(exc):
        log.warning("%s", exc)
    return told


def allowed_methods(request: Request, routes: Sequence[BaseRoute]) -> list[str]:
    """Every method some route serves at this path (Starlette's 405 names only the first route's)."""
    methods: set[str] = set()
    for route in routes:
        if route.matches(request.scope)[0] is not Match.NONE:  # PARTIAL: the path matches, the method does not
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


class BodyLimit:
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
        body = await self._read_streamed(receive)
        if body is None:
            await _too_large(self.max_bytes)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)

    async def _read_streamed(self, receive: Receive) -> bytes | None:
        """A streamed body read whole before the app sees any of it; None when it passes the limit."""
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return None
            more = message.get("more_body", False)
        return b"".join(chunks)


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse({"error": f"request body is larger than {limit} bytes"}, status_code=413)
