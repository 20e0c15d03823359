"""How the service fails: one ``{"error": message}`` body, the status a user error maps to, and the body limit.

On the OpenAI-compatible routes the message sits where OpenAI's clients read it, ``{"error": {"message": ...}}``,
so an SDK's exception says what is wrong rather than only the status code.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tanglerag.errors import IndexStoreError, ModelError, ServerUnreachableError, TangleragError


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


def error_body(request: Request, message: str, status: int) -> dict[str, Any]:
    if request.url.path in OPENAI_PATHS:
        return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                          "code": status}}
    return {"error": message}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(error_body(request, str(exc), exc.status), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(TangleragError)
    async def user_error(request: Request, exc: TangleragError) -> JSONResponse:
        return JSONResponse(error_body(request, str(exc), status_for(exc)), status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        body = error_body(request, f"{where}: {first['msg']}", 422)
        return JSONResponse(body | {"detail": json.loads(json.dumps(exc.errors(), default=str))}, status_code=422)


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
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

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
