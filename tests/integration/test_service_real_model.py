"""`tanglerag serve`'s app on the real embedded model and MiniLM: an answer streamed with its stages and citations."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tanglerag.embeddings import Embedder
from tanglerag.index.passage_index import store_passages
from tanglerag.ingest import load_corpus
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.llm.llamacpp import LlamaCppBackend
from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app
from tanglerag.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SAMPLE = Path(__file__).parents[2] / "src/tanglerag/sample_data/sample_corpus.jsonl"


def test_streamed_answer_from_the_embedded_model(tmp_path):
    settings = Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "retrieval.top_k=3"])
    embedder = Embedder(settings.embedding)
    store_passages(tmp_path / "index", load_corpus(SAMPLE), embedder, settings.index)
    llm = LLM(LlamaCppBackend(settings.llm.model, settings.cache_dir, n_ctx=2048,
                              n_threads=settings.llm.n_threads), CallCache(None))
    runtime = Runtime(settings, index_dir=tmp_path / "index", llm=llm, embedder=embedder)
    with TestClient(create_app(runtime)) as client:
        assert client.get("/healthz").json()["model"] == settings.llm.model
        with client.stream("POST", "/v1/ask?stream=true",
                           json={"question": "What sport is Bobby Carpenter associated with?"}) as r:
            blocks = r.read().decode().strip().split("\n\n")
    events = [(b.split("\n")[0].removeprefix("event: "), json.loads(b.split("\n")[1].removeprefix("data: ")))
              for b in blocks]
    kinds = [k for k, _ in events]
    assert kinds[:2] == ["stage_start", "stage_end"] and "llm_call" in kinds and kinds[-1] == "answer"
    answer = events[-1][1]
    assert answer["answer"] != "unknown" and answer["citations"], answer["answer"]
    assert answer["usage"]["llm_calls"] == 1 and len(answer["trace"]["calls"]) == 1
    assert set(answer["citations"]) <= {p["id"] for p in answer["passages"]}
