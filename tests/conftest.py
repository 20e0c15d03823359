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
