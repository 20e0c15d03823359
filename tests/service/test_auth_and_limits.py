"""API keys (401/403, per-user isolation), body and queue limits (413, 429), timeouts (504)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tanglerag.errors import ConfigError
from tanglerag.service.app import create_app
from tanglerag.service.auth import ApiKeys, is_loopback
from tanglerag.testing import CannedBackend
from tests.service.conftest import ADMIN, ALICE, BOB, Blocking, bearer, client_for, make_runtime


def test_without_a_valid_key_everything_but_health_is_401(keyed):
    assert keyed.get("/healthz").json()["auth"] is True
    for headers in ({}, {"Authorization": "Bearer wrong-key-0123456789"}, {"Authorization": f"Basic {ADMIN}"}):
        r = keyed.post("/v1/ask", json={"question": "capital of France?"}, headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert keyed.get("/v1/index", headers=headers).status_code == 401
        assert keyed.get("/v1/users/alice/contexts", headers=headers).status_code == 401
    assert keyed.post("/v1/ask", json={"question": "capital of France?"}, headers=bearer(ALICE)).status_code == 200


def test_a_user_key_reads_and_writes_only_its_own_contexts(keyed):
    assert keyed.post("/v1/users/alice/contexts", json={"contexts": ["I live in Porto."]},
                      headers=bearer(ALICE)).status_code == 201
    assert keyed.get("/v1/users/alice/contexts", headers=bearer(BOB)).status_code == 403
    assert keyed.post("/v1/users/alice/contexts", json={"contexts": ["x"]}, headers=bearer(BOB)).status_code == 403
    assert keyed.delete("/v1/users/alice/contexts?id=abc", headers=bearer(BOB)).status_code == 403
    r = keyed.post("/v1/ask", json={"question": "capital of France?", "user": "alice"}, headers=bearer(BOB))
    assert r.status_code == 403
    assert len(keyed.get("/v1/users/alice/contexts", headers=bearer(ADMIN)).json()["contexts"]) == 1
    assert keyed.get("/v1/users/bob/contexts", headers=bearer(BOB)).json()["contexts"] == []


def test_only_an_admin_key_adds_documents(keyed):
    body = b'{"id": "n1", "text": "New text."}'
    headers = {"Content-Type": "application/x-ndjson"}
    assert keyed.post("/v1/index/documents", content=body, headers=headers | bearer(ALICE)).status_code == 403
    assert keyed.post("/v1/index/documents", content=body, headers=headers | bearer(ADMIN)).status_code == 200
    for write in (keyed.put("/v1/index/documents/n1", json={"text": "x"}, headers=bearer(ALICE)),
                  keyed.delete("/v1/index/documents/n1", headers=bearer(ALICE))):
        assert write.status_code == 403
    assert keyed.delete("/v1/index/documents/n1", headers=bearer(ADMIN)).json()["removed"] == 1


def test_key_sources_and_their_errors(tmp_path):
    keyfile = tmp_path / "keys"
    keyfile.write_text(f"# comment\n{ADMIN}\n{ALICE} alice\n")
    keys = ApiKeys.load(keyfile, env="")
    assert keys.identify(f"Bearer {ADMIN}").admin
    assert keys.identify(f"bearer {ALICE}").user == "alice"
    assert keys.identify("Bearer nope") is None and keys.identify(None) is None
    assert ApiKeys.load(env="").identify(None).admin  # no keys: loopback service, every caller admin
    with pytest.raises(ConfigError, match="shorter than 16"):
        ApiKeys.load(env="short")
    keyfile.write_text(f"{ADMIN} alice extra\n")
    with pytest.raises(ConfigError, match="keys:1"):
        ApiKeys.load(keyfile, env="")
    with pytest.raises(ConfigError, match="cannot read"):
        ApiKeys.load(tmp_path / "missing", env="")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def test_bodies_over_the_limit_are_413(tmp_path):
    with client_for(make_runtime(tmp_path, overrides=["service.max_body_bytes=200"])) as c:
        r = c.post("/v1/ask", json={"question": "q" * 300})
        assert r.status_code == 413 and "200 bytes" in r.json()["error"]

        def chunks():  # no Content-Length: the limit still holds
            yield b'{"id": "a", "text": "'
            yield b"x" * 300
            yield b'"}'

        r = c.post("/v1/index/documents", content=chunks(), headers={"Content-Type": "application/x-ndjson"})
        assert r.status_code == 413
        assert c.get("/v1/index").json()["manifest"]["count"] == 3


def _blocking_app(tmp_path, *overrides: str):
    blocking = Blocking()
    runtime = make_runtime(tmp_path, overrides=list(overrides), backend=CannedBackend(responder=blocking))
    return create_app(runtime), blocking


async def _post(client: httpx.AsyncClient, question: str) -> httpx.Response:
    return await client.post("/v1/ask", json={"question": question, "method": "concat"})  # a model call each


def test_beyond_the_queue_bound_questions_get_429_at_once(tmp_path):
    app, blocking = _blocking_app(tmp_path, "service.max_running=1", "service.max_waiting=1")

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            first = asyncio.create_task(_post(client, "one"))
            await asyncio.to_thread(blocking.started.wait, 5)
            second = asyncio.create_task(_post(client, "two"))  # waits in the queue
            await asyncio.sleep(0.05)
            third = await _post(client, "three")  # queue full
            health = (await client.get("/healthz")).json()
            blocking.release.set()
            return third, health, await first, await second

    third, health, first, second = asyncio.run(scenario())
    assert third.status_code == 429 and int(third.headers["retry-after"]) >= 1 and "busy" in third.json()["error"]
    assert (health["running"], health["waiting"]) == (1, 1)
    assert first.status_code == 200 and second.status_code == 200


def test_questions_arriving_together_are_bounded_too(tmp_path):
    app, blocking = _blocking_app(tmp_path, "service.max_running=1", "service.max_waiting=2")

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            tasks = [asyncio.create_task(_post(client, f"q{i}")) for i in range(8)]  # all before any is admitted
            await asyncio.sleep(0.2)
            health = (await client.get("/healthz")).json()
            blocking.release.set()
            return health, await asyncio.gather(*tasks)

    health, responses = asyncio.run(scenario())
    assert (health["running"], health["waiting"]) == (1, 2)
    assert sorted(r.status_code for r in responses) == [200] * 3 + [429] * 5


def test_a_slow_answer_is_504_and_keeps_its_slot_until_it_ends(tmp_path):
    app, blocking = _blocking_app(tmp_path, "service.answer_timeout_s=0.2", "service.max_waiting=0")

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            slow = await _post(client, "slow")
            busy = await _post(client, "next")  # the timed-out work still runs: no second slot
            blocking.release.set()
            await asyncio.sleep(0.1)
            return slow, busy, (await client.get("/healthz")).json()

    slow, busy, health = asyncio.run(scenario())
    assert slow.status_code == 504 and "0.2s" in slow.json()["error"]
    assert busy.status_code == 429
    assert health["running"] == 0


def test_a_timed_out_question_stops_before_its_next_call_and_is_counted(tmp_path):
    app, blocking = _blocking_app(tmp_path, "service.answer_timeout_s=0.2", "service.max_waiting=0")
    backend = app.state.tanglerag.runtime.llm.backend

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            # COrg makes its graph calls, then answers: three calls one after another when it runs to the end
            slow = await client.post("/v1/ask", json={"question": "slow", "method": "corg"})
            blocking.release.set()  # the call in progress finishes; the next one is refused
            for _ in range(50):
                if (await client.get("/healthz")).json()["running"] == 0:
                    break
                await asyncio.sleep(0.02)
            after = await _post(client, "next")  # the slot is free again
            return slow, after, (await client.get("/metrics")).text

    slow, after, metrics = asyncio.run(scenario())
    assert slow.status_code == 504 and after.status_code == 200
    assert len(backend.requests) == 2  # one call for the abandoned question, one for the next
    assert "tanglerag_abandoned_questions_total 1.0" in metrics
    assert "tanglerag_abandoned_llm_calls_total 1.0" in metrics



def test_a_user_key_may_lower_costs_but_not_raise_them(keyed):
    def ask(options: dict, key: str = ALICE):
        return keyed.post("/v1/ask", json={"question": "capital of France?", "options": options}, headers=bearer(key))

    for options, name in (({"methods.samples": 2}, "methods.samples"), ({"retrieval.top_k": 4}, "retrieval.top_k"),
                          ({"methods.answer_tokens": 1000}, "methods.answer_tokens"),
                          ({"diva.verification": "each"}, "diva.verification"),
                          ({"corg.answer_each": True}, "corg.answer_each")):
        r = ask(options)
        assert r.status_code == 403 and r.json()["error"].startswith(f"option {name}: "), r.text
        assert "\n" not in r.json()["error"]
    assert keyed.post("/v1/ask", json={"question": "capital of France?", "top_k": 50},
                      headers=bearer(ALICE)).status_code == 403
    assert ask({"retrieval.top_k": 2, "methods.answer_tokens": 8, "diva.verification": "batched"}).status_code == 200
    assert ask({"retrieval.top_k": 50, "methods.samples": 2}, key=ADMIN).status_code == 200
    assert ask({"methods.samples": 1000}, key=ADMIN).status_code == 422  # past the ceiling, even for an admin
