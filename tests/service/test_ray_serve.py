"""``serve --engine ray`` (issue 70): the service as two Ray Serve replicas on a local Ray instance, each its own
process with its own runtime over one index folder, answering through Serve's proxy as one process does; a replica
killed while requests go on is replaced, and the other answers meanwhile. The model is a fake OpenAI-compatible server
on 127.0.0.1 every replica calls, the embedder the hashing one (no model to load in each replica)."""

import functools
import socket
import time

import httpx
import openai
import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.llm.factory import build_backend
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, fake_openai_server
from tests.service.conftest import CORPUS

ray = pytest.importorskip("ray")
ray_serve = pytest.importorskip("tanglerag.service.ray_serve")  # Ray Serve itself is imported by the tests that run
# it (3.5 s, which every pytest worker would pay collecting this module)
pytestmark = pytest.mark.xdist_group("ray")  # one Ray instance at a time on this machine (conftest's local_ray)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _replicas(deployment: str = ray_serve.APP_NAME) -> list[str]:
    """The running replicas of one of the application's deployments (the service's by default)."""
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
            if a["name"].startswith(f"SERVE_REPLICA::{ray_serve.APP_NAME}#{deployment}#")]


def _wait(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


@pytest.fixture
def served(tmp_path, local_ray):
    """Two replicas of the service on a local Ray instance, their proxy's base URL yielded."""
    serve = pytest.importorskip("ray.serve")
    with fake_openai_server(lambda body: "Paris [1]") as model:
        settings = Settings.load(overrides=["llm.backend=openai", f"llm.base_url={model['base_url']}",
                                            "llm.cache=false", "retrieval.top_k=3", "service.replicas=2",
                                            f"service.port={_free_port()}", "service.index_poll_s=0"])
        store_passages(tmp_path / "index", CORPUS, HashEmbedder(), settings.index)
        try:
            make = functools.partial(Runtime, settings, index_dir=tmp_path / "index", embedder=HashEmbedder())
            ray_serve.start(make, settings.service)
            yield f"http://127.0.0.1:{settings.service.port}"
        finally:
            serve.shutdown()


def _ask(base: str) -> str:
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=30)
    reply = client.chat.completions.create(model="tanglerag/concat",
                                           messages=[{"role": "user", "content": "What is the capital of France?"}])
    return reply.choices[0].message.content


def test_two_replicas_answer_as_one_process_and_a_killed_one_is_replaced(served):
    assert len(_replicas()) == 2
    health = httpx.get(f"{served}/healthz", timeout=30).json()
    assert health["status"] == "ok" and health["index"] and health["index_version"]  # each replica's own index
    assert all(_ask(served).startswith("Paris [1]") for _ in range(6))
    victim = _replicas()[0]
    ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
    answered = [_ask(served) for _ in range(6)]  # the other replica answers while the dead one is replaced
    assert all(a.startswith("Paris [1]") for a in answered)
    _wait(lambda: len(_replicas()) == 2 and victim not in _replicas())
    assert _ask(served).startswith("Paris [1]")


def test_a_fixed_count_or_autoscaling_bounds_and_bounds_that_cannot_hold_are_refused():
    from tanglerag.errors import ConfigError

    fixed = Settings.load(overrides=["service.replicas=3"]).service
    assert ray_serve.scaling(fixed) == {"num_replicas": 3}
    scaled = Settings.load(overrides=["service.replicas=2", "service.max_replicas=6",
                                      "service.target_ongoing_requests=8"]).service
    assert ray_serve.scaling(scaled) == {"autoscaling_config": {"min_replicas": 2, "max_replicas": 6,
                                                                "target_ongoing_requests": 8.0}}
    with pytest.raises(ConfigError, match=r"service.max_replicas \(1\) is below service.replicas \(2\)"):
        Settings.load(overrides=["service.replicas=2", "service.max_replicas=1"])


@pytest.fixture
def shared_model(tmp_path, local_ray):
    """Two service replicas sharing one model replica (the llm section's backend, here the fake server's client) and
    one query-embedding replica that waits half a second to gather a batch; their proxy's base URL yielded."""
    serve = pytest.importorskip("ray.serve")
    with fake_openai_server(lambda body: "Paris [1]") as model:
        settings = Settings.load(overrides=[
            "llm.backend=openai", f"llm.base_url={model['base_url']}", "llm.cache=false", "retrieval.top_k=3",
            "service.replicas=2", "service.model_replicas=1", "service.embedding_replicas=1",
            "service.embedding_batch_wait_s=0.5", f"service.port={_free_port()}", "service.index_poll_s=0"])
        store_passages(tmp_path / "index", CORPUS, HashEmbedder(), settings.index)
        try:
            shared = ray_serve.Shared(functools.partial(build_backend, settings.llm, settings.cache_dir),
                                      HashEmbedder, settings.llm, settings.cache_dir)
            ray_serve.start(functools.partial(Runtime, settings, index_dir=tmp_path / "index"), settings.service,
                            shared=shared)
            yield f"http://127.0.0.1:{settings.service.port}", model
        finally:
            serve.shutdown()


def test_service_replicas_share_the_model_and_embed_questions_in_batches(shared_model):
    from concurrent.futures import ThreadPoolExecutor

    from ray import serve

    from tanglerag.service.ray_models import EMBEDDING_DEPLOYMENT, MODEL_DEPLOYMENT

    base, model = shared_model
    assert [len(_replicas(d)) for d in (ray_serve.APP_NAME, MODEL_DEPLOYMENT, EMBEDDING_DEPLOYMENT)] == [2, 1, 1]
    embedding = serve.get_deployment_handle(EMBEDDING_DEPLOYMENT, app_name=ray_serve.APP_NAME)
    before = len(embedding.batch_sizes.remote().result())  # a replica's start-up embeds too
    with ThreadPoolExecutor(6) as pool:
        answered = list(pool.map(lambda _: _ask(base), range(6)))
    assert all(a.startswith("Paris [1]") for a in answered)
    calls = serve.get_deployment_handle(MODEL_DEPLOYMENT, app_name=ray_serve.APP_NAME).served.remote().result()
    batches = embedding.batch_sizes.remote().result()[before:]
    assert calls == model["requests"] == 6  # every answer's model call went through the one model replica
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=30)
    chunks = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="tanglerag/concat", stream=True, messages=[{"role": "user", "content": "What is the capital of France?"}])
        if c.choices]
    assert "".join(chunks).startswith("Paris [1]") and sum(bool(c) for c in chunks) > 1  # streamed from the model replica
    assert sum(batches) == 6 and max(batches) > 1  # every question embedded there, several in one batch
