"""Operations and the inspector: ``/healthz`` (alive), ``/readyz`` (can answer), ``/metrics``, the page, and
``/views.js`` (every family's step views)."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response

from tanglerag.family import FAMILIES, families
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import Health, Readiness, error_responses
from tanglerag.service.state import MetricsDep, State

router = APIRouter(tags=["operations"])
STATIC = Path(__file__).parent.parent / "static"
METRICS_RESPONSES = error_responses(401, 403) | {
    200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}}


@router.get("/healthz", response_model=Health)
async def health(state: State) -> Health:
    loaded = state.runtime.loaded_index
    return Health(status="ok", auth=state.keys.enabled, index=state.has_index(), runs=state.runs is not None,
                  model=_model_name(state.runtime.llm.backend.model_id), running=state.gate.running,
                  waiting=state.gate.waiting, index_version=loaded.version if loaded is not None else None)


@router.get("/readyz", response_model=Readiness, responses=error_responses(503))
async def ready(state: State) -> Readiness:
    """200 when a question could be answered now: the model is loaded, or the LLM server answers, and the index
    (if any) reads; 503 otherwise."""
    problem = (await asyncio.to_thread(state.runtime.llm.backend.not_ready)
               or await asyncio.to_thread(state.runtime.corpus.problem))
    if problem is not None:
        raise ServiceError(503, f"not ready: {state.redact(problem)}")
    return Readiness(status="ready", index=state.has_index())


def _model_name(model_id: str) -> str:
    """The model's own name: a server's address (``URL#model``) and a weights file's folder are not shown."""
    return Path(model_id.rsplit("#", 1)[-1]).name


@router.get("/metrics", response_class=Response, dependencies=[MetricsDep],
            responses=METRICS_RESPONSES)
async def metrics(state: State) -> Response:
    """Prometheus metrics; an admin key is needed unless the server listens on loopback only
    (``service.metrics_key_required``)."""
    return Response(state.telemetry.render(), media_type="text/plain; version=0.0.4")


@router.get("/", include_in_schema=False)
async def inspector() -> FileResponse:
    return FileResponse(STATIC / "index.html")


@router.get("/views.js", include_in_schema=False)
async def step_views() -> Response:
    """Every registered family's view (``Family.view``: its steps' inspector views), served as one script."""
    return Response(_views_script(FAMILIES.version), media_type="text/javascript")


@cache
def _views_script(version: int) -> str:
    """Read once per set of families (``version`` changes when a family is registered)."""
    views = sorted(family.view for family in families() if family.view is not None)
    return "\n".join(path.read_text(encoding="utf-8") for path in views)
