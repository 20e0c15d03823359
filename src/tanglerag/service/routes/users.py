"""A user's personal context statements (PCAS): list, add, remove; a user key acts only as its user."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Response

from tanglerag.errors import ContextStoreError
from tanglerag.service.errors import ServiceError, client_message
from tanglerag.service.schemas import ContextList, NewContexts, error_responses
from tanglerag.service.state import CallerDep, State, UserPath, WritableDep, acting_as
from tanglerag.users import UserContext

router = APIRouter(tags=["users"], responses=error_responses(401, 403, 413, 422))


@router.get("/v1/users/{user}/contexts", response_model=ContextList)
async def list_contexts(user: UserPath, who: CallerDep, state: State) -> ContextList:
    """A user's context statements (only that user's key, or an admin key)."""
    acting_as(user, who)
    contexts = await asyncio.to_thread(state.runtime.context_store.list, user)
    return ContextList(user=user, contexts=contexts)


@router.post("/v1/users/{user}/contexts", response_model=list[UserContext], status_code=201,
             responses=error_responses(400, 409), dependencies=[WritableDep])  # 400: a body that is not JSON
async def add_contexts(user: UserPath, body: NewContexts, who: CallerDep, state: State) -> list[UserContext]:
    """Add statements about the user; each gets an id."""
    acting_as(user, who)
    return await asyncio.to_thread(state.runtime.context_store.add, user, body.contexts)


@router.delete("/v1/users/{user}/contexts", status_code=204, responses=error_responses(404, 409),
                dependencies=[WritableDep])
async def remove_context(user: UserPath, who: CallerDep, state: State,
                         id: Annotated[str, Query(min_length=1, max_length=64, description="the statement's id")]
                         ) -> Response:
    """Remove one statement by id."""
    acting_as(user, who)
    try:
        await asyncio.to_thread(state.runtime.context_store.remove, user, id)
    except ContextStoreError as exc:
        raise ServiceError(404, client_message(exc, state.redact)) from None
    return Response(status_code=204)
