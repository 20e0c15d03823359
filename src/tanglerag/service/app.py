"""The FastAPI application: one warmed runtime, bounded admission, API keys, and the web inspector.

``create_app`` only assembles: the explicit state on ``app.state`` (``state.py``), the error shape and the
body limit (``errors.py``), the check that JSON bodies hold text and numbers (``bodies.py``), request metrics, the security headers
(``headers.py``), and one router per area (``routes/``).

>>> app = create_app(Runtime(settings, index_dir=Path("my-index")))  # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from tanglerag.errors import IndexStoreError
from tanglerag.runtime import Runtime
from tanglerag.service import index_watch
from tanglerag.service.auth import ApiKeys
from tanglerag.service.bodies import JsonBodies
from tanglerag.service.errors import BodyLimit, install_error_handlers
from tanglerag.service.headers import SecurityHeaders
from tanglerag.service.routes import ask, chat, index, ops, runs, search, users
from tanglerag.service.schemas import served_methods
from tanglerag.service.state import ServiceState
from tanglerag.stores.base import StoreError

log = logging.getLogger(__name__)


def _warm(runtime: Runtime, index: bool) -> None:
    """Load the models and the index before the first question; an index that cannot be loaded (damaged, missing)
    does not stop the start: the service comes up and says not ready (``/readyz``) with the line naming it."""
    try:
        runtime.warm_up(index)
    except IndexStoreError as exc:
        log.error("the index could not be loaded, so the service is not ready: %s", exc)
    except StoreError as exc:
        log.error("the vector store cannot be reached, so the service is not ready: %s", exc)


def create_app(runtime: Runtime, keys: ApiKeys | None = None, *, warm_up: bool = True,
               runs_dir: Path | None = None) -> FastAPI:
    """The service over ``runtime`` (its index folder is where documents are added); ``runs_dir``: eval
    outputs for the run browser."""
    state = ServiceState.for_runtime(runtime, keys if keys is not None else ApiKeys({}), runs_dir)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            await asyncio.to_thread(_warm, runtime, state.has_index())
        log.info("tanglerag service ready (%s)",
                 "API keys required" if state.keys.enabled else "no API keys: loopback only")
        every = runtime.settings.service.index_poll_s
        watching = asyncio.create_task(index_watch.watch(state, every)) if every > 0 else None
        yield
        if watching is not None:
            watching.cancel()
        if state.spans is not None:  # the spans still batched go out before the process ends
            await asyncio.to_thread(state.spans.close)

    # no /docs or /redoc: FastAPI serves their scripts from a CDN, which an offline machine cannot reach
    app = FastAPI(title="tanglerag", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Answers from tangled contexts, with citations and a trace of why.")
    app.state.tanglerag = state
    cfg = runtime.settings.service
    app.add_middleware(JsonBodies)  # added first, so it runs inside BodyLimit: it reads bodies already bounded
    app.add_middleware(BodyLimit, max_bytes=cfg.max_body_bytes)
    if cfg.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cfg.cors_origins, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])

    @app.middleware("http")
    async def measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        state.telemetry.observe_request(getattr(route, "path", "unmatched"), response.status_code,
                                        time.perf_counter() - start)
        return response

    app.add_middleware(SecurityHeaders)  # added last, so it runs outermost: every response passes through it
    routers = (ask.router, search.router, chat.router, index.router, users.router, runs.router, ops.router)
    install_error_handlers(app, [route for router in routers for route in router.routes], state.redact)
    for router in routers:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=ops.STATIC), name="static")
    app.openapi = lambda: _with_limits(app, cfg.max_question_chars)  # type: ignore[method-assign]
    return app


def _with_limits(app: FastAPI, max_question_chars: int) -> dict[str, Any]:
    """The OpenAPI schema with this server's own limits and methods (plugins included: they register before the
    schema is first asked for), so a client sees them before it is refused."""
    if app.openapi_schema is None:
        schemas = FastAPI.openapi(app)["components"]["schemas"]
        ask = schemas["AskBody"]["properties"]
        ask["question"]["maxLength"] = schemas["SearchBody"]["properties"]["query"]["maxLength"] = max_question_chars
        ask["method"]["enum"] = served_methods()
    return app.openapi_schema  # type: ignore[return-value]
