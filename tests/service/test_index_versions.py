"""Issue 70: index versions swapped under load. A served index folder that another process saves new versions of is
followed between requests (``service.index_poll_s``): searches running all the while never fail nor see a version
half loaded, ``GET /v1/index`` and ``/healthz`` say which version answers, and the new document is found once it
does."""

from __future__ import annotations

import threading
import time

from fastapi.testclient import TestClient

from tanglerag.config import IndexConfig
from tanglerag.index.passage_index import read_manifest, store_passages
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage

FIRST = [Passage(id=f"p{i}", text=f"Passage {i} says the office opens at {i} o'clock.") for i in range(20)]


def _serving(client: TestClient) -> str | None:
    return client.get("/v1/index").json()["serving"]


def test_new_versions_written_by_another_process_are_swapped_in_under_load(tmp_path):
    folder = tmp_path / "idx"
    store_passages(folder, FIRST, HashEmbedder(), IndexConfig(bm25=True))
    settings = Settings.load(overrides=["service.index_poll_s=0.05", "retrieval.top_k=3"])
    runtime = Runtime(settings, index_dir=folder, embedder=HashEmbedder(),
                      llm=LLM(CannedBackend(default="unknown"), CallCache(None)))
    failures: list[str] = []
    done = threading.Event()
    with TestClient(create_app(runtime)) as client:
        first = _serving(client)
        assert first == read_manifest(folder).data and client.get("/healthz").json()["index_version"] == first

        def searching() -> None:
            while not done.is_set():
                reply = client.post("/v1/search", json={"query": "when does the office open"})
                if reply.status_code != 200 or len(reply.json()["passages"]) != 3:
                    failures.append(reply.text)

        searchers = [threading.Thread(target=searching) for _ in range(3)]
        for thread in searchers:
            thread.start()
        for n in range(4):  # another process (`tanglerag index --add`) saving four versions while searches go on
            store_passages(folder, [Passage(id=f"new{n}", text=f"Parking permit number {n} is sold at the desk.")],
                           HashEmbedder(), IndexConfig(bm25=True))
            time.sleep(0.1)
        latest = read_manifest(folder).data
        deadline = time.monotonic() + 10
        while _serving(client) != latest and time.monotonic() < deadline:
            time.sleep(0.05)
        done.set()
        for thread in searchers:
            thread.join()
        assert _serving(client) == latest != first
        found = client.post("/v1/search", json={"query": "parking permit number 3 sold at the desk"}).json()
        assert "new3" in {p["id"] for p in found["passages"]}
    assert failures == []
    assert [p.name for p in folder.iterdir() if p.name.startswith("data-")] == [latest]  # the writer swept the rest


def test_polling_off_keeps_the_version_loaded_at_start(tmp_path):
    folder = tmp_path / "idx"
    store_passages(folder, FIRST, HashEmbedder(), IndexConfig())
    runtime = Runtime(Settings.load(overrides=["service.index_poll_s=0"]), index_dir=folder, embedder=HashEmbedder(),
                      llm=LLM(CannedBackend(default="unknown"), CallCache(None)))
    with TestClient(create_app(runtime)) as client:
        first = _serving(client)
        store_passages(folder, [Passage(id="new", text="Parking permits are sold at the desk.")], HashEmbedder(),
                       IndexConfig())
        time.sleep(0.3)
        assert _serving(client) == first != read_manifest(folder).data
