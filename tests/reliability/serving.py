"""The real service for the reliability tests: uvicorn on a free port in a thread, as `tanglerag serve` runs it, so
what a client sees is what goes over the wire (headers, streams, status lines), not a test client's view."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tanglerag.index.passage_index import store_passages
from tanglerag.runtime import Runtime
from tanglerag.service.auth import ApiKeys
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, serve_app
from tests.service.conftest import CORPUS


@contextmanager
def served(runtime: Runtime, keys: ApiKeys | None = None, runs_dir: Path | None = None, *,
           warm_up: bool = True) -> Iterator[str]:
    """The service over ``runtime``, listening on its ``service.host`` (``0.0.0.0`` too) and a free port; yields a
    loopback URL to it. A start that fails (the warm-up raised) raises."""
    from tanglerag.service.app import create_app

    app = create_app(runtime, keys, warm_up=warm_up, runs_dir=runs_dir)
    with serve_app(app, runtime.settings.service.host) as url:
        yield url


def settings_for(tmp_path: Path, *overrides: str) -> Settings:
    """Settings as the service tests use them (users and the LLM cache under ``tmp_path``), plus ``overrides``."""
    return Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", f"cache_dir={tmp_path / 'cache'}",
                                    "retrieval.top_k=3", "auto.entity_signals=false", *overrides])


def runtime_on_server(tmp_path: Path, base_url: str, *overrides: str) -> Runtime:
    """A runtime whose LLM is the OpenAI-compatible server at ``base_url`` (built from settings, as `serve` builds
    it), over the service tests' corpus and the hashing embedder."""
    settings = settings_for(tmp_path, "llm.backend=openai", f"llm.base_url={base_url}", "llm.model=m",
                            "llm.max_retries=0", "llm.cache=false", *overrides)
    embedder = HashEmbedder()
    store_passages(tmp_path / "index", CORPUS, embedder, settings.index)
    return Runtime(settings, index_dir=tmp_path / "index", embedder=embedder)
