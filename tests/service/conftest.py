from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tanglerag.index.passage_index import store_passages
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app
from tanglerag.service.auth import ApiKeys
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage

ADMIN = "admin-key-0123456789abcdef"
ALICE = "alice-key-0123456789abcdef"
BOB = "bob-key-0123456789abcdef0"

CORPUS = [
    Passage(id="p1", title="Paris", text="Paris is the capital of France and its largest city."),
    Passage(id="p2", title="Berlin", text="Berlin is the capital of Germany."),
    Passage(id="p3", title="Madrid", text="Madrid is the capital and most populous city of Spain."),
]


class Blocking:
    """A canned responder that holds every call until ``release`` is set (for queue and timeout tests)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def __call__(self, messages) -> str:
        self.started.set()
        self.release.wait(10)
        return "Paris [1]"


def make_runtime(tmp_path: Path, *, with_index: bool = True, overrides: list[str] | None = None,
                 backend: CannedBackend | None = None) -> Runtime:
    # auto's entity signals load spaCy (3-4 s a worker), which is beside the point of the service's tests
    settings = Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "retrieval.top_k=3",
                                        "auto.entity_signals=false", *(overrides or [])])
    embedder = HashEmbedder()
    index_dir = tmp_path / "index"
    if with_index:
        store_passages(index_dir, CORPUS, embedder, settings.index)
    backend = backend or CannedBackend([("capital of France", "Paris [1]")], default="unknown")
    return Runtime(settings, index_dir=index_dir, llm=LLM(backend, CallCache(None)), embedder=embedder)


def client_for(runtime: Runtime, keys: ApiKeys | None = None) -> TestClient:
    return TestClient(create_app(runtime, keys), raise_server_exceptions=True)


@pytest.fixture
def client(tmp_path):
    with client_for(make_runtime(tmp_path)) as c:
        yield c


@pytest.fixture
def keyed(tmp_path):
    keys = ApiKeys.load(env=f"{ADMIN},{ALICE}=alice,{BOB}=bob")
    with client_for(make_runtime(tmp_path), keys) as c:
        yield c


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright, one per test module (tests/service/browsing.py finds it). Not one per
    session: Playwright's sync API keeps an event loop running in this thread while it is open, and every later test
    of the worker that calls asyncio.run() would fail."""
    from playwright.sync_api import sync_playwright

    from tests.service.browsing import CHROMIUM

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()
