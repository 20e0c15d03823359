"""The service's explicit state (held on ``app.state``) and the dependencies routes use to reach it.

Routes never close over ``create_app``'s locals: each declares what it needs (the state, the caller,
an admin) as a FastAPI dependency, so a router can be read, tested and mounted on its own.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from fastapi import Path as PathParam
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tanglerag.errors import ContextStoreError
from tanglerag.eval.runs import RunLibrary
from tanglerag.otel import SpanExport, span_export
from tanglerag.runtime import Runtime
from tanglerag.service.auth import ApiKeys, Caller, is_loopback
from tanglerag.service.errors import ServiceError
from tanglerag.service.gate import Gate
from tanglerag.service.redaction import Redactor
from tanglerag.service.telemetry import Telemetry
from tanglerag.users import USER_ID_PATTERN, check_user_id


@dataclass
class ServiceState:
    runtime: Runtime  # replaced when documents are added (the new index is swapped in)
    keys: ApiKeys
    gate: Gate
    telemetry: Telemetry = field(default_factory=Telemetry)
    index_writes: asyncio.Lock = field(default_factory=asyncio.Lock)
    upload_reads: asyncio.Semaphore = field(default_factory=asyncio.Semaphore)  # one upload read at a time
    runs: RunLibrary | None = None  # eval runs to browse (serve --runs DIR)
    redact: Redactor = field(default_factory=Redactor)  # the server's paths and URLs out of what callers read
    started: int = field(default_factory=lambda: int(time.time()))  # a model's `created`: when it was first served
    spans: SpanExport | None = None  # each answer's trace as OpenTelemetry spans (otel.enabled)

    @classmethod
    def for_runtime(cls, runtime: Runtime, keys: ApiKeys, runs: Path | None = None) -> ServiceState:
        settings = runtime.settings
        cfg = settings.service
        running = cfg.max_running or runtime.llm.backend.max_concurrency
        folders = [runtime.index_dir, runs, settings.personal.store_dir, settings.cache_dir]
        return cls(runtime=runtime, keys=keys, gate=Gate(running, cfg.max_waiting, cfg.queue_timeout_s),
                   runs=RunLibrary(runs) if runs is not None else None, redact=Redactor(folders),
                   spans=span_export(settings.otel))

    def has_index(self) -> bool:
        """Whether there are passages to answer from: an index folder, or a vector store (``store.backend``)."""
        return self.runtime.corpus.present()


# The dependencies are coroutines: FastAPI runs a plain ``def`` dependency in a worker thread (anyio's pool, 40
# threads), two thread hops a request for a dictionary lookup; as coroutines they run in the loop.
async def get_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.tanglerag
    return state


State = Annotated[ServiceState, Depends(get_state)]


# documents the bearer scheme in OpenAPI; the check itself is ours (a missing key is a 401 with our error body)
BEARER = HTTPBearer(auto_error=False, description="an API key: 'KEY' (admin) or 'KEY USER' (that user only)")


async def get_caller(state: State,
                     credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None) -> Caller:
    found = state.keys.identify(f"Bearer {credentials.credentials}" if credentials else None)
    if found is None:
        raise ServiceError(401, "missing or invalid API key: send 'Authorization: Bearer KEY'",
                           {"WWW-Authenticate": "Bearer"})
    return found


CallerDep = Annotated[Caller, Depends(get_caller)]


async def get_admin(who: CallerDep) -> Caller:
    return _admin(who)


def _admin(who: Caller) -> Caller:
    if not who.admin:
        raise ServiceError(403, "this needs an admin key")
    return who


AdminDep = Annotated[Caller, Depends(get_admin)]


async def writable(state: State) -> None:
    """A write reaches this process's index or user statements only when it is not a read-only replica: replicas of
    one shared index or store have one writer, so two never save versions of it over each other."""
    if state.runtime.settings.service.read_only:
        raise ServiceError(409, "this server is a read-only replica (service.read_only): write through the one "
                                "writer (tanglerag index --add / --sync on the shared index or store, or the server "
                                "started without service.read_only)")


WritableDep = Depends(writable)


async def metrics_reader(request: Request, state: State) -> None:
    """``/metrics`` needs an admin key when ``service.metrics_key_required`` says so, by default when the server
    listens beyond loopback: the counts tell who asks what, how much and when. The key is read from the header, not
    declared as the route's security scheme, because whether it is needed is the operator's setting."""
    cfg = state.runtime.settings.service
    required = cfg.metrics_key_required if cfg.metrics_key_required is not None else not is_loopback(cfg.host)
    if required:
        found = state.keys.identify(request.headers.get("authorization"))
        if found is None:
            raise ServiceError(401, "missing or invalid API key: /metrics needs an admin key here",
                               {"WWW-Authenticate": "Bearer"})
        _admin(found)


MetricsDep = Depends(metrics_reader)


UserPath = Annotated[str, PathParam(pattern=USER_ID_PATTERN, description="letters, digits, '_', '-', '.', '@'")]


def acting_as(user: str, who: Caller) -> str:
    """``user`` when ``who`` may act as them (their own key, or an admin); 422 / 403 otherwise."""
    try:
        check_user_id(user)
    except ContextStoreError as exc:
        raise ServiceError(422, str(exc)) from None
    if not who.may_act_as(user):
        raise ServiceError(403, f"this key may not act as user {user!r}")
    return user
