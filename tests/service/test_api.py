"""Every endpoint through FastAPI's TestClient on the canned LLM and the hashing embedder."""

from __future__ import annotations

import json

from tanglerag.outputs import AnswerOutput
from tanglerag.service.schemas import AskResponse
from tests.service.conftest import client_for, make_runtime


def test_ask_returns_answer_citations_and_trace(client):
    r = client.post("/v1/ask", json={"question": "What is the capital of France?", "method": "concat"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] == "Paris [1]"
    assert body["citations"] == [body["passages"][0]["id"]]  # "[1]" is the first passage shown
    assert "p1" in [p["id"] for p in body["passages"]]
    assert len(body["trace"]["calls"]) == 1 and body["usage"]["llm_calls"] == 1
    assert body["usage_by_stage"]["generate"]["llm_calls"] == 1


def test_top_k_and_per_question_options(client):
    r = client.post("/v1/ask", json={"question": "What is the capital of France?", "top_k": 2})
    assert len(r.json()["passages"]) == 2
    r = client.post("/v1/ask", json={"question": "capital of France?", "options": {"retrieval.top_k": 1}})
    assert len(r.json()["passages"]) == 1


def test_options_that_name_files_or_the_llm_are_refused(client):
    for key in ("diva.demo_pool", "personal.store_dir", "llm.model", "cache_dir", "corg.reader", "eval.reader"):
        r = client.post("/v1/ask", json={"question": "capital of France?", "options": {key: "/etc/passwd"}})
        assert r.status_code == 422 and r.json()["error"] == f"options.{key}: Extra inputs are not permitted"
    r = client.post("/v1/ask", json={"question": "capital?", "options": {"diva.verification": "sometimes"}})
    assert r.status_code == 422 and r.json()["error"].startswith("options.diva.verification: Input should be 'each'")
    for value in (True, "3", 2.5):  # JSON's own types: 3.0 is an integer, true and "3" are not
        r = client.post("/v1/ask", json={"question": "capital?", "options": {"retrieval.top_k": value}})
        assert r.status_code == 422, value
    assert client.post("/v1/ask", json={"question": "capital?", "options": {"retrieval.top_k": 3.0}}).status_code == 200


def test_the_schema_names_every_option_a_request_may_set(client):
    options = client.get("/openapi.json").json()["components"]["schemas"]["Options"]
    assert options["additionalProperties"] is False
    assert {"retrieval.top_k", "diva.verification", "corg.graph"} <= set(options["properties"])
    assert not {"diva.demo_pool", "eval.reader", "llm.model"} & set(options["properties"])
    assert options["properties"]["diva.verification"]["anyOf"][0]["enum"] == ["each", "batched"]


def test_bad_input_is_422_naming_the_field(client):
    r = client.post("/v1/ask", json={"question": 5})
    assert r.status_code == 422 and r.json()["error"].startswith("question:")
    r = client.post("/v1/ask", json={"method": "concat"})
    assert r.status_code == 422 and r.json()["error"].startswith("question:")
    r = client.post("/v1/ask", json={"question": "   "})
    assert r.status_code == 422 and "question" in r.json()["error"]
    r = client.post("/v1/ask", json={"question": "x" * 2001})
    assert r.status_code == 422 and "2000" in r.json()["error"]
    r = client.post("/v1/ask", json={"question": "q", "top_k": 0})
    assert r.status_code == 422 and r.json()["error"].startswith("top_k:")
    r = client.post("/v1/ask", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422


def test_unknown_or_evaluation_only_method_is_a_clear_422(client):
    for name in ("magic", "diva-oracle"):  # the oracle needs gold readings no request carries
        r = client.post("/v1/ask", json={"question": "q", "method": name})
        assert r.status_code == 422 and r.json()["error"].startswith(f"method: unknown method '{name}'; ")
        assert "corg" in r.json()["error"] and "diva-oracle" not in r.json()["error"].split("lists them:")[1]


def test_stream_sends_stage_events_then_the_answer(client):
    with client.stream("POST", "/v1/ask?stream=true", json={"question": "capital of France?", "method": "diva"}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [(block.split("\n")[0].removeprefix("event: "), json.loads(block.split("\n")[1].removeprefix("data: ")))
                  for block in r.read().decode().strip().split("\n\n")]
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "answer" and kinds[0] == "stage_start"
    assert ("stage_start", "retrieve") in [(k, d.get("stage")) for k, d in events]
    assert {d["stage"] for k, d in events if k == "llm_call"} >= {"interpret", "generate"}
    steps = [d["data"] for k, d in events if k == "step"]
    assert steps and steps[0]["kind"] == "diva" and steps[0]["grade"]
    assert len(events[-1][1]["trace"]["calls"]) == kinds.count("llm_call")


def test_methods_lists_every_method_with_paper_and_calls(client):
    from tanglerag.methods.base import method_classes

    listed = {m["name"]: m for m in client.get("/v1/methods").json()}
    assert set(listed) == set(method_classes()) - {"diva-oracle"}
    assert listed["diva"]["paper"] == "001" and listed["diva"]["calls"].startswith("4")
    assert listed["post-fusion"]["calls"] == "1 per passage"


def test_health_and_metrics(client):
    health = client.get("/healthz").json()
    assert health.pop("index_version").startswith("data-")  # the version answering (test_index_versions.py)
    assert health == {"status": "ok", "auth": False, "index": True, "runs": False, "model": "canned-v1",
                      "running": 0, "waiting": 0}
    client.post("/v1/ask", json={"question": "capital of France?"})
    client.post("/v1/ask", json={"question": "capital of France?"})
    text = client.get("/metrics").text
    assert 'tanglerag_requests_total{route="/v1/ask",status="200"} 2.0' in text
    assert "tanglerag_llm_calls_total 1.0" in text and "tanglerag_llm_cache_hits_total 1.0" in text
    assert 'tanglerag_request_seconds_bucket{le="0.01",route="/v1/ask"}' in text


def test_every_error_has_one_shape_even_from_the_framework(client):
    r = client.get("/v1/nothing-here")  # most often an OpenAI client trying an endpoint we lack: OpenAI's shape
    assert r.status_code == 404 and r.json() == {"error": {
        "message": "no such path: /v1/nothing-here", "type": "invalid_request_error", "param": None,
        "code": "unknown_url"}}
    r = client.put("/v1/users/alice/contexts")
    assert r.status_code == 405 and r.json() == {"error": "PUT is not allowed here"}
    assert r.headers["allow"] == "DELETE, GET, POST"  # every route at the path, not the first one's
    r = client.post("/v1/ask", content=b'{"question": "\xff"}', headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 422) and set(r.json()) <= {"error", "detail"} and r.json()["error"]


def test_readiness_asks_the_model_and_liveness_does_not(tmp_path):
    import httpx

    from tanglerag.llm.openai_compat import OpenAICompatBackend

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    rt = make_runtime(tmp_path)
    with client_for(rt) as c:
        assert c.get("/readyz").json() == {"status": "ready", "index": True}
        rt.llm.backend = OpenAICompatBackend("http://127.0.0.1:9/v1", "m", max_retries=0,
                                             transport=httpx.MockTransport(refuse))
        r = c.get("/readyz")
        assert r.status_code == 503 and r.json()["error"].startswith("not ready: the LLM server cannot be reached")
        assert "127.0.0.1:9" not in r.text
        assert c.get("/healthz").json()["status"] == "ok"
        r = c.post("/v1/ask", json={"question": "never asked before?", "method": "concat"})  # one model call
        assert r.status_code == 502 and "127.0.0.1:9" not in r.text and "cannot be reached" in r.json()["error"]


def test_cors_only_for_the_configured_origins(tmp_path):
    origin = "https://chat.example.org"
    with client_for(make_runtime(tmp_path, overrides=[f"service.cors_origins=['{origin}']"])) as c:
        r = c.options("/v1/ask", headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                          "Access-Control-Request-Headers": "authorization,content-type"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
        r = c.get("/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
    with client_for(make_runtime(tmp_path)) as c:
        assert "access-control-allow-origin" not in c.get("/healthz", headers={"Origin": origin}).headers


def test_index_manifest_and_adding_documents(client):
    assert client.get("/v1/index").json()["manifest"]["count"] == 3
    body = b'{"id": "p9", "title": "Lisbon", "text": "Lisbon is the capital of Portugal."}\n'
    r = client.post("/v1/index/documents", content=body, headers={"Content-Type": "application/x-ndjson"})
    assert r.json() == {"received": 1, "added": 1, "already_present": 0, "replaced": [], "removed": 0, "total": 4}
    r = client.post("/v1/index/documents", content=body, headers={"Content-Type": "application/x-ndjson"})
    assert r.json()["added"] == 0 and r.json()["already_present"] == 1
    r = client.post("/v1/index/documents", files=[("files", ("notes/oslo.txt", b"Oslo is the capital of Norway.",
                                                              "text/plain"))])
    assert r.json()["added"] == 1
    ids = [p["id"] for p in client.post("/v1/ask", json={"question": "Oslo capital of Norway", "top_k": 5}
                                        ).json()["passages"]]
    assert "notes/oslo.txt" in ids and "p9" in ids  # the client's path is the id: one name in two folders is two ids


def test_documents_are_replaced_only_on_purpose_and_removed_whole(client):
    jsonl = {"Content-Type": "application/x-ndjson"}
    changed = b'{"id": "p2", "title": "Berlin", "text": "Berlin hosts the Brandenburg Gate."}'
    r = client.post("/v1/index/documents", content=changed, headers=jsonl)
    assert r.status_code == 409 and r.json()["error"].startswith("document id 'p2' already in the index with other")
    r = client.post("/v1/index/documents?replace=true", content=changed, headers=jsonl)
    assert r.json() | {"total": 3} == {"received": 1, "added": 1, "already_present": 0, "replaced": ["p2"],
                                       "removed": 1, "total": 3}
    long_text = " ".join(f"word{i}" for i in range(450))  # chunked in three at 200 words with overlap 40
    r = client.put("/v1/index/documents/guides/long.md", json={"text": long_text, "title": "Long"})
    assert r.status_code == 200 and r.json()["added"] == 3 and r.json()["total"] == 6
    r = client.put("/v1/index/documents/guides/long.md", json={"text": "Now it is short.", "title": "Long"})
    assert r.json()["replaced"] == ["guides/long.md"] and r.json()["removed"] == 3 and r.json()["total"] == 4
    r = client.delete("/v1/index/documents/guides/long.md")
    assert r.json() == {"removed": 1, "total": 3}
    r = client.delete("/v1/index/documents/guides/long.md")
    assert r.status_code == 404 and r.json()["error"] == "no document with id 'guides/long.md' in the index"
    assert client.put("/v1/index/documents/x", json={"text": "  "}).status_code == 422
    answer = client.post("/v1/ask", json={"question": "Brandenburg Gate", "top_k": 3}).json()
    assert {p["id"]: p["text"] for p in answer["passages"]}["p2"] == "Berlin hosts the Brandenburg Gate."


def test_bad_documents_name_the_line_and_keep_the_index(client):
    r = client.post("/v1/index/documents", content=b'{"id": "a", "text": "ok"}\n{"id": "b"}\n',
                    headers={"Content-Type": "application/x-ndjson"})
    assert r.status_code == 400 and "body.jsonl:2" in r.json()["error"] and "'text'" in r.json()["error"]
    r = client.post("/v1/index/documents", content=b"<xml/>", headers={"Content-Type": "application/xml"})
    assert r.status_code == 415
    r = client.post("/v1/index/documents", files=[("files", ("x.pdf", b"%PDF", "application/pdf"))])
    assert r.status_code == 400 and "x.pdf" in r.json()["error"]
    assert client.get("/v1/index").json()["manifest"]["count"] == 3


def test_without_an_index_ask_says_what_to_do_and_an_upload_creates_one(tmp_path):
    with client_for(make_runtime(tmp_path, with_index=False)) as c:
        assert c.get("/healthz").json()["index"] is False
        r = c.post("/v1/ask", json={"question": "capital of France?"})
        assert r.status_code == 409 and "/v1/index/documents" in r.json()["error"]
        r = c.post("/v1/ask", json={"question": "capital of France?", "options": {"retrieval.top_k": 2}})
        assert r.status_code == 409 and "/v1/index/documents" in r.json()["error"]  # not a failed index load
        assert c.get("/v1/index").status_code == 404
        r = c.post("/v1/index/documents", content=b'{"id": "p1", "text": "Paris is the capital of France."}',
                   headers={"Content-Type": "application/x-ndjson"})
        assert r.json()["total"] == 1
        assert c.post("/v1/ask", json={"question": "capital of France?"}).json()["citations"] == ["p1"]  # the only one


def test_user_contexts_add_list_remove(client):
    r = client.post("/v1/users/alice/contexts", json={"contexts": ["I live in Lisbon.", "I am vegetarian."]})
    assert r.status_code == 201 and [c["text"] for c in r.json()] == ["I live in Lisbon.", "I am vegetarian."]
    first = r.json()[0]["id"]
    assert len(client.get("/v1/users/alice/contexts").json()["contexts"]) == 2
    assert client.delete(f"/v1/users/alice/contexts?id={first}").status_code == 204
    assert [c["text"] for c in client.get("/v1/users/alice/contexts").json()["contexts"]] == ["I am vegetarian."]
    assert client.delete(f"/v1/users/alice/contexts?id={first}").status_code == 404
    assert client.get("/v1/users/bob/contexts").json()["contexts"] == []
    r = client.post("/v1/ask", json={"question": "capital of France?", "user": "alice"})
    assert r.status_code == 200 and r.json()["user"] == "alice" and r.json()["user_context"]["text"] == "I am vegetarian."


def test_ask_its_stream_and_chat_return_one_answer_model(client):
    fields = set(AnswerOutput.model_fields)
    body = client.post("/v1/ask", json={"question": "capital of France?", "method": "concat"}).json()
    assert set(body) == fields and AskResponse.model_validate(body).model_dump(mode="json") == body
    assert body["usage"]["llm_calls"] == 1 and isinstance(body["usage"]["llm_calls"], int)  # as `ask --json` prints
    with client.stream("POST", "/v1/ask?stream=true", json={"question": "capital of France?", "method": "concat"}) as r:
        last = r.read().decode().strip().split("\n\n")[-1]
    assert last.startswith("event: answer\n") and set(json.loads(last.split("data: ", 1)[1])) == fields
    chat = client.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
        {"role": "user", "content": "capital of France?"}]}).json()
    assert set(chat["tanglerag"]) == fields | {"ignored_turns"}
    same = ("question", "method", "answer", "citations", "passages", "parts", "user", "user_context")
    assert [chat["tanglerag"][k] for k in same] == [body[k] for k in same]


def test_user_ids_never_reach_the_filesystem(client, tmp_path):
    for bad in ("..", "a b", "x" * 129):
        r = client.get(f"/v1/users/{bad}/contexts")
        assert r.status_code in (404, 422), bad
    assert client.get("/v1/users/%2e%2e/contexts").status_code == 422
    r = client.post("/v1/users/..%2Fescape/contexts", json={"contexts": ["x"]})
    assert r.status_code in (404, 422)
    assert not (tmp_path / "escape").exists()


def test_everything_the_inspector_loads_is_served_locally(client):
    import re

    page = client.get("/").text
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert assets and all(a.startswith("/") for a in assets)  # no CDN: works offline
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert client.get("/docs").status_code == 404  # FastAPI's docs page would fetch scripts from a CDN
