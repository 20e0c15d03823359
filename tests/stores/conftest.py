"""Fixtures of the store contract suite: each test runs once per backend of ``backends.BACKENDS``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import VectorStore
from tests.stores.backends import BACKENDS, Backend


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every backend registered by collection time (``backend_*.py`` modules included)."""
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", sorted(BACKENDS), indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    chosen = BACKENDS[request.param]
    if chosen.needs and importlib.util.find_spec(chosen.needs) is None:
        pytest.skip(f"{request.param}: {chosen.needs} is not installed")
    return chosen

@pytest.fixture
def open_store(backend: Backend, tmp_path: Path) -> Iterator[Callable[..., VectorStore]]:
    """Open stores of the backend on this test's folder (closed at the end): ``open_store(collection, fields)``."""
    opened: list[VectorStore] = []

    def make(collection: str = "passages", fields: FieldMapping | None = None) -> VectorStore:
        store = backend.open(tmp_path, collection, fields)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
