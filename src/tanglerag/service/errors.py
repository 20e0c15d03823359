"""How the service fails: one ``{"error": message}`` body, the status a user error maps to, and the body limit.

On the OpenAI-compatible routes, and on any path no route serves outside our own API's (the client that reaches one is
most often an OpenAI client trying an endpoint we lack, such as ``/v1/embeddings``), every error has OpenAI's shape, as its OpenAPI
description gives it: ``{"error": {"message", "type", "param", "code"}}`` with a string ``code`` (``model_not_found``,
``unsupported_parameter``, ...) and the field at fault in ``param``, and an invalid body is a 400 there (OpenAI's
status), not FastAPI's 422 with its ``detail`` array. An SDK's exception then says what is wrong, and its type
(``BadRequestError``, ``NotFoundError``) is the one it would be against OpenAI.

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
from tanglerag.stores.base import StoreError

log = logging.getLogger(__name__)


class ServiceError(Exception):
    """An HTTP error with a one-line message (the body is ``{"error": message}``); ``code`` and ``param`` are what
    OpenAI's error shape says of it on the OpenAI routes (a default code by status when not given)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None, *,
                 code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers
        self.code = code
        self.param = param


def status_for(exc: TangleragError) -> int:
    if isinstance(exc, ServerUnreachableError):
        return 502
    if isinstance(exc, StoreError):  # down, a timeout, a missing collection: the server's store, not the request
        return 503
    if isinstance(exc, ModelError):
        return 503
    if isinstance(exc, IndexStoreError):
        return 409
    return 400


OPENAI_PATHS = {"/v1/chat/completions", "/v1/completions", "/v1/models"}
_CODES = {400: "invalid_request", 401: "invalid_api_key", 403: "insufficient_permissions", 404: "not_found",
          405: "method_not_allowed", 409: "conflict", 413: "request_too_large", 415: "unsupported_media_type",
          422: "invalid_request", 429: "rate_limit_exceeded", 500: "server_error", 502: "upstream_unreachable",
          503: "model_failed", 504: "timeout"}


def is_openai(path: str) -> bool:
    """Whether ``path`` is one of OpenAI's routes (the model list and each model included)."""
    return path in OPENAI_PATHS or path.startswith("/v1/models/")


def error_status(status: int, openai: bool) -> int:
    """The status an error gets: OpenAI answers an invalid request with 400 where FastAPI's convention is 422."""
    return 400 if openai and status == 422 else status


def error_body(path: str, message: str, status: int, *, code: str | None = None, param: str | None = None,
               openai: bool | None = None) -> dict[str, Any]:
    """The body of an error at ``path``: OpenAI's shape on its routes (or where ``openai`` says), ours elsewhere."""
    if openai or (openai is None and is_openai(path)):
        return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                          "param": param, "code": code or _CODES.get(status, "error")}}
    return {"error": message}


def error_response(request: Request, status: int, message: str, headers: dict[str, str] | None = None, *,
                   code: str | None = None, param: str | None = None, openai: bool | None = None) -> JSONResponse:
    openai = is_openai(request.url.path) if openai is None else openai
    return JSONResponse(error_body(request.url.path, message, status, code=code, param=param, openai=openai),
                        status_code=error_status(status, openai), headers=headers)


def install_error_handlers(app: FastAPI, routes: Sequence[BaseRoute], redact: Redactor) -> None:
    """Our error shape for every error; ``routes`` are the API's, for the ``Allow`` header of a 405; ``redact``
    takes the server's paths out of a user error's message."""

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return error_response(request, exc.status, str(exc), exc.headers, code=exc.code, param=exc.param)

    @app.exception_handler(TangleragError)
    async def user_error(request: Request, exc: TangleragError) -> JSONResponse:
        return error_response(request, status_for(exc), client_message(exc, redact),
                              code="store_unavailable" if isinstance(exc, StoreError) else None)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        """Starlette's own refusals (no such path, wrong method, unreadable body) in our error shape; a path no
        route serves in OpenAI's."""
        headers = dict(exc.headers or {})
        allowed = allowed_methods(request, routes)
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed)
        message = {404: f"no such path: {request.url.path}", 405: f"{request.method} is not allowed here"}
        unknown = exc.status_code == 404 and not allowed and not _ours(request.url.path, routes)
        return error_response(request, exc.status_code, message.get(exc.status_code, str(exc.detail)), headers,
                              code="unknown_url" if unknown else None, openai=True if unknown else None)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request", "type": ""}
        where = sent_field(first["loc"], exc.body, missing=first["type"] == "missing")
        if is_openai(request.url.path):
            return error_response(request, 400, f"{where}: {first['msg']}", param=where, code=_reason(str(first["type"])))
        body = error_body(request.url.path, f"{where}: {first['msg']}", 422)
        detail = json.loads(json.dumps(exc.errors(), default=str), parse_constant=str)  # a NaN input as "NaN"
        return JSONResponse(body | {"detail": detail}, status_code=422)


def sent_field(loc: Sequence[Any], body: Any, *, missing: bool = False) -> str:
    """The field at fault as the client sent it, a dotted path (``messages.0.content``): pydantic's location follows
    the body as far as the body goes, and what it adds beyond (the member of a union it tried, ``.str``) is dropped;
    a ``missing`` field is named though the body lacks it. A query or path parameter keeps its location."""
    if not loc or loc[0] != "body":
        return ".".join(str(part) for part in loc) or "body"
    kept: list[str] = []
    value = body
    for n, part in enumerate(loc[1:], start=2):
        if isinstance(value, dict) and isinstance(part, str) and (part in value or (missing and n == len(loc))):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            break
        kept.append(str(part))
    return ".".join(kept) or "body"


def _ours(path: str, routes: Sequence[BaseRoute]) -> bool:
    """Whether ``path`` lies where our own API's routes are (``/v1/index/...``): an unknown path there is a mistyped
    call of ours, answered in our shape; anywhere else it is a client of OpenAI's API asking for what we lack."""
    families = {"/".join(str(getattr(route, "path", "")).split("/")[:3]) for route in routes}
    return "/".join(path.split("/")[:3]) in {family for family in families if not is_openai(family)}


def _reason(pydantic_type: str) -> str:
    """OpenAI's code for a pydantic error type: a missing field, a value of the wrong type, or a wrong value."""
    if pydantic_type == "missing":
        return "missing_required_parameter"
    if pydantic_type.endswith("_type") or pydantic_type in ("model_attributes_type", "is_instance_of"):
        return "invalid_type"
    return "invalid_value"


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
            await _too_large(self.max_bytes, scope["path"])(scope, receive, send)
            return
        if declared is not None:
            await self.app(scope, receive, send)  # servers stop reading at the declared length
            return
        body = await self._read_streamed(receive)
        if body is None:
            await _too_large(self.max_bytes, scope["path"])(scope, receive, send)
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


def _too_large(limit: int, path: str) -> JSONResponse:
    return JSONResponse(error_body(path, f"request body is larger than {limit} bytes", 413), status_code=413)
