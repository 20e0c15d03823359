"""``POST /v1/search``: the passages a query retrieves, ranked with their provenance and scores, and no model call.

Checked as ``/v1/ask`` checks a question (the key, the query's length, the filter, and a user key's ``top_k`` no
higher than the server's), then awaited through the runtime's ``asearch``. It is not admitted through the gate: the
gate bounds model work, and a search waiting behind long answers would cost the milliseconds it is for; its search
runs in the loop's worker threads. A search writes nothing, so a user key's reads the served index as it stands.
"""

from __future__ import annotations

from fastapi import APIRouter

from tanglerag.outputs import SearchOutput
from tanglerag.runtime import SearchRequest
from tanglerag.service.auth import Caller
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import SearchBody, error_responses, passage_clipped
from tanglerag.service.state import CallerDep, ServiceState, State
from tanglerag.tracking import Tracker

router = APIRouter(tags=["search"])


@router.post("/v1/search", response_model=SearchOutput, responses=error_responses(400, 401, 403, 409, 413, 422))
async def search(body: SearchBody, who: CallerDep, state: State) -> SearchOutput:
    """The passages the index ranks first for a query, with file, page, section, date, source and score: retrieval
    alone, without the LLM."""
    _check(state, body, who)
    tracker = Tracker()
    runtime = state.runtime
    hits = await runtime.asearch(SearchRequest(query=body.query, top_k=body.top_k, where=body.where, tracker=tracker))
    output = SearchOutput.from_hits(body.query, hits, tracker.usage)
    limit = runtime.settings.service.max_passage_chars
    return output.model_copy(update={"passages": [passage_clipped(p, limit) for p in output.passages]})


def _check(state: ServiceState, body: SearchBody, who: Caller) -> None:
    """Refuse what ``/v1/ask`` would refuse of the same query, before the index is searched."""
    settings = state.runtime.settings
    if len(body.query) > settings.service.max_question_chars:
        raise ServiceError(422, f"query: longer than {settings.service.max_question_chars} characters")
    if not state.has_index():
        raise ServiceError(409, "no index yet: POST documents to /v1/index/documents first")
    if body.top_k is not None and not who.admin and body.top_k > settings.retrieval.top_k:
        raise ServiceError(403, f"top_k: {body.top_k} passages is more than this server's {settings.retrieval.top_k}; "
                                "a user key may only ask for fewer (an admin key for more)")
