"""``Tanglerag.search`` / ``asearch`` and the runtime's ``asearch`` (issue 63, item 1): the passages ``ask`` would be
given, ranked with their scores and metadata, with no LLM built or called; the arguments checked as ``ask`` checks
them; the search recorded as the ``retrieve`` stage of the caller's tracker."""

import asyncio
from pathlib import Path

import pytest

from tanglerag import Tanglerag
from tanglerag.errors import IndexStoreError, InputError
from tanglerag.runtime import SearchRequest
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm
from tanglerag.tracking import Tracker
from tanglerag.types import Passage

PASSAGES = [Passage(id="fr", title="France", text="Paris is the capital of France.",
                    metadata={"date": "2024-05-01", "source": "atlas.org"}),
            Passage(id="de", title="Germany", text="Berlin is the capital of Germany.", metadata={"date": "1990"}),
            Passage(id="it", title="Italy", text="Rome is the capital of Italy.",
                    metadata={"path": "notes/italy.md", "section": ["Capitals"]})]


@pytest.fixture
def rag(tmp_path: Path) -> Tanglerag:
    settings = Settings.load(overrides=[f"cache_dir={tmp_path / 'cache'}", "retrieval.top_k=2"])
    rag = Tanglerag(tmp_path / "index", settings, llm=canned_llm([("capital", "Paris [1]")]), embedder=HashEmbedder())
    rag.build(PASSAGES)
    return rag


def _no_model_call(rag: Tanglerag) -> bool:
    return not rag.runtime.llm.backend.requests  # type: ignore[attr-defined]  # the canned backend records calls


def test_search_ranks_passages_like_asks_retrieval_without_a_model_call(rag: Tanglerag) -> None:
    hits = rag.search("Paris is the capital of France.")
    assert [hit.passage.id for hit in hits][:1] == ["fr"] and len(hits) == 2  # retrieval.top_k
    assert hits[0].score >= hits[1].score and [hit.rank for hit in hits] == sorted(hit.rank for hit in hits)
    assert hits[0].passage.metadata["source"] == "atlas.org"
    assert len(rag.search("capital", top_k=3)) == 3
    assert _no_model_call(rag)
    asked = rag.ask("Paris is the capital of France.")
    assert [p.passage.id for p in asked.passages] == [hit.passage.id for hit in hits]  # what ask was given
    assert not _no_model_call(rag)  # the canned backend does record a call: the check above means something


def test_asearch_is_awaited_and_filters_by_metadata(rag: Tanglerag) -> None:
    async def both() -> tuple[list, list]:
        return await asyncio.gather(rag.asearch("capital", where="date >= 2024", top_k=3),
                                    rag.asearch("Rome is the capital of Italy.", top_k=1))
    recent, rome = asyncio.run(both())
    assert [hit.passage.id for hit in recent] == ["fr"]
    assert [hit.passage.id for hit in rome] == ["it"] and rome[0].passage.metadata["path"] == "notes/italy.md"
    assert _no_model_call(rag)


def test_the_runtime_records_the_search_as_the_retrieve_stage(rag: Tanglerag) -> None:
    tracker = Tracker(on_event=lambda event: events.append((event.type, event.stage)))
    events: list[tuple[str, str]] = []
    hits = rag.runtime.search(SearchRequest(query="capital", tracker=tracker))
    assert len(hits) == 2 and events == [("stage_start", "retrieve"), ("stage_end", "retrieve")]
    assert tracker.usage.totals()["llm_calls"] == 0 and tracker.usage.stages["retrieve"].seconds > 0


@pytest.mark.parametrize(("call", "message"), [
    (lambda rag: rag.search(b"capital"), "query must be text, got bytes"),
    (lambda rag: rag.search("   "), "invalid query"),
    (lambda rag: rag.search("capital", top_k=0), "top_k must be between 1 and 100, got 0"),
    (lambda rag: rag.search("capital", top_k=True), "top_k must be a whole number, got bool"),
    (lambda rag: rag.search("capital", where="dat >= 2024"), "unknown field 'dat'"),
    (lambda rag: rag.search("capital", where="authority >= gov"), "authority value 'gov' cannot be read"),
])
def test_bad_arguments_are_input_errors_naming_them(rag: Tanglerag, call, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call(rag)
    assert _no_model_call(rag)


def test_searching_without_an_index_says_so(tmp_path: Path) -> None:
    settings = Settings.load(overrides=[f"cache_dir={tmp_path / 'cache'}"])
    with pytest.raises(IndexStoreError, match="not a tanglerag index"):
        Tanglerag(tmp_path / "nowhere", settings, llm=canned_llm(), embedder=HashEmbedder()).search("capital")
    with pytest.raises(IndexStoreError, match="searching needs an index"):
        Tanglerag(None, settings, llm=canned_llm(), embedder=HashEmbedder()).search("capital")
