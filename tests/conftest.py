from __future__ import annotations

import pytest

from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.methods.base import Resources
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage, RetrievedPassage


@pytest.fixture
def canned() -> CannedBackend:
    return CannedBackend()


@pytest.fixture
def llm_factory(tmp_path):
    """Build an LLM around a canned backend with a persistent cache in tmp_path."""
    def make(backend: CannedBackend, *, persistent: bool = True, use_cache: bool = True) -> LLM:
        cache = CallCache(tmp_path / "cache.sqlite3" if persistent else None)
        return LLM(backend, cache, use_cache=use_cache)
    return make


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def passages() -> list[Passage]:
    return [
        Passage(id="p1", title="Paris", text="Paris is the capital of France and its largest city."),
        Passage(id="p2", title="Berlin", text="Berlin is the capital of Germany."),
        Passage(id="p3", title="Madrid", text="Madrid is the capital and most populous city of Spain."),
        Passage(id="p4", title="Rome", text="Rome is the capital city of Italy, founded on seven hills."),
        Passage(id="p5", title="Vienna", text="Vienna is the capital of Austria on the river Danube."),
    ]


def resources(llm: LLM, settings: Settings | None = None) -> Resources:
    """Method resources around a test LLM, with the hashing embedder."""
    return Resources.for_llm(llm, settings, embedder=HashEmbedder())


def as_retrieved(passages: list[Passage]) -> list[RetrievedPassage]:
    return [RetrievedPassage(passage=p, score=1.0 - i / 10, rank=i + 1) for i, p in enumerate(passages)]


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray instance for every test that needs one (each starting its own took ~10 s on two cores, four
    times a run); the tests that use it share a worker (``xdist_group("ray")``), so only one runs at a time. Its
    workers run at the normal priority: at Ray's default nice 15 they starved beside the other pytest-xdist worker
    (27 s for the Ray engine's test against 5 s); the raylet reads RAY_worker_niceness when it starts. Five CPUs:
    the most any test asks for at once (two service replicas, a model and an embedding replica, and Serve's own)."""
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_worker_niceness", "0")
        ray.init(num_cpus=5, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
