"""The run browser's API (``serve --runs DIR``): the eval runs under DIR, one run as a filtered grid of
questions x methods, and every method's answer and trace for one question. The page is ``/runs``.

A run holds whatever its dataset held: every string of a grid or a question goes out clipped at
``service.max_passage_chars``, as ``/v1/ask`` clips passages, so a 5 MB question is not a 5 MB reply."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from tanglerag.errors import InputError
from tanglerag.eval.records import Prediction
from tanglerag.eval.runs import Grid, GridQuery, Run, RunInfo, RunLibrary, UnknownRun
from tanglerag.provenance import places
from tanglerag.service.errors import ServiceError, client_message
from tanglerag.service.routes.ops import STATIC
from tanglerag.service.schemas import RunAnswer, RunPassage, RunQuestion, clipped_all, error_responses
from tanglerag.service.state import CallerDep, ServiceState, State
from tanglerag.types import Passage

router = APIRouter(tags=["runs"], responses=error_responses(401, 404, 409, 422))


def _library(state: State) -> RunLibrary:
    if state.runs is None:
        raise ServiceError(404, "this server browses no eval runs: start it with `tanglerag serve --runs DIR`")
    return state.runs


async def _run(state: ServiceState, name: str) -> Run:
    library = _library(state)
    try:
        return await asyncio.to_thread(library.get, name)
    except UnknownRun as exc:
        raise ServiceError(404, client_message(exc, state.redact)) from None
    except InputError as exc:  # the run's own files are damaged: nothing the request can change
        raise ServiceError(409, client_message(exc, state.redact)) from None


@router.get("/v1/runs", response_model=list[RunInfo])
async def list_runs(_: CallerDep, state: State) -> list[RunInfo]:
    """The eval runs under the browsed folder: finished ones, and those still running or interrupted."""
    library = _library(state)
    try:
        return await asyncio.to_thread(library.infos)
    except InputError as exc:
        raise ServiceError(409, client_message(exc, state.redact)) from None


@router.get("/v1/runs/{run:path}/grid", response_model=Grid)
async def run_grid(run: str, _: CallerDep, state: State, query: Annotated[GridQuery, Query()]) -> Grid:
    """The run's questions x methods with each cell's score, filtered by ``show`` and ``tangle``."""
    loaded = await _run(state, run)
    try:
        grid = loaded.grid(query)
    except InputError as exc:
        raise ServiceError(422, client_message(exc, state.redact)) from None
    return Grid.model_validate(clipped_all(grid.model_dump(mode="json"), _limit(state)))


@router.get("/v1/runs/{run:path}/question", response_model=RunQuestion)
async def run_question(run: str, _: CallerDep, state: State,
                       id: Annotated[str, Query(min_length=1, description="the question's id")]) -> RunQuestion:
    """Every method's answer to one question of the run, with its passages, scores and trace."""
    loaded = await _run(state, run)
    try:
        answers = loaded.question(id)
    except UnknownRun as exc:
        raise ServiceError(404, client_message(exc, state.redact)) from None
    first = next(iter(answers.values()))
    found = RunQuestion(run=run, id=id, question=first.question, gold=first.gold, tangles=first.tangles,
                        answers=[_answer(p, loaded.dataset_passages) for p in answers.values()])
    return RunQuestion.model_validate(clipped_all(found.model_dump(mode="json"), _limit(state)))


def _limit(state: ServiceState) -> int:
    return state.runtime.settings.service.max_passage_chars


def _answer(prediction: Prediction, dataset_passages: dict[str, Passage]) -> RunAnswer:
    """``dataset_passages`` stand in for the passages of predictions that kept only ids (their score is lost)."""
    if prediction.passages:
        passages = [_passage(r.passage, r.score) for r in prediction.passages]
    else:
        passages = [_passage(dataset_passages[pid], None) if pid in dataset_passages
                    else RunPassage(id=pid, title="", text="", score=None, label="") for pid in prediction.passage_ids]
    return RunAnswer(method=prediction.method, answer=prediction.answer, citations=prediction.citations,
                     passages=passages, metrics=prediction.metrics, usage=prediction.usage,
                     usage_by_stage=prediction.usage_by_stage, parts=prediction.parts, trace=prediction.trace)


def _passage(passage: Passage, score: float | None) -> RunPassage:
    """The passage as the inspector lists it, with where it stands in its file (page, section) when it says."""
    return RunPassage(id=passage.id, title=passage.title, text=passage.text, score=score,
                      label=str(passage.metadata.get("type", "")), **places(passage.metadata))


@router.get("/runs", include_in_schema=False)
async def runs_page() -> FileResponse:
    return FileResponse(STATIC / "runs.html")
