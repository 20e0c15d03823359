"""``POST /v1/search`` (issue 63, item 1): the passages a query retrieves, ranked with provenance and scores, plus the
usage, and no model call; the same keys, length limit, error bodies and filter checks as ``/v1/ask``."""

from __future__ import annotations

from tests.service.conftest import ADMIN, ALICE, bearer, client_for, make_runtime

NOTE = b"---\ntitle: Oslo note\ndate: 2024-05\nsource: wiki\n---\n# Capitals\n\nOslo is the capital of Norway.\n"


def _search(client, query: str = "capital of France", headers: dict[str, str] | None = None, **body):
    return client.post("/v1/search", json={"query": query, **body}, headers=headers or {})


def _no_model_call(client) -> bool:
    return not client.app.state.tanglerag.runtime.llm.backend.requests


def test_search_returns_ranked_passages_with_scores_and_usage_and_calls_no_model(client):
    reply = _search(client, "Paris is the capital of France and its largest city.")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["query"] == "Paris is the capital of France and its largest city." and set(body) == {
        "query", "passages", "usage"}
    passages = body["passages"]
    assert passages[0]["id"] == "p1" and len(passages) == 3  # retrieval.top_k
    assert passages[0] | {"score": 0} == {"id": "p1", "title": "Paris", "score": 0,
                                          "text": "Paris is the capital of France and its largest city."}
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)
    assert body["usage"]["llm_calls"] == 0 and body["usage"]["seconds"] > 0
    assert len(_search(client, top_k=1).json()["passages"]) == 1
    assert _no_model_call(client)


def test_uploaded_files_show_their_path_section_date_and_source_and_where_filters(client):
    files = [("files", ("notes/oslo.md", NOTE, "text/markdown"))]
    assert client.post("/v1/index/documents", files=files).json()["added"] == 1
    found = _search(client, "Oslo is the capital of Norway.", top_k=1).json()["passages"][0]
    assert {key: found.get(key) for key in ("path", "section", "date", "source", "title")} == {
        "path": "notes/oslo.md", "section": ["Capitals"], "date": "2024-05", "source": "wiki", "title": "Oslo note"}
    recent = _search(client, "capital", top_k=5, where="date >= 2024").json()["passages"]
    assert [p["id"] for p in recent] == [found["id"]]
    assert len(_search(client, "capital", top_k=5, where="").json()["passages"]) == 4  # empty: no filter
    assert _no_model_call(client)


def test_a_where_that_cannot_be_read_is_a_400_naming_it(client):
    r = _search(client, where="dat >= 2024")
    assert r.status_code == 400 and r.json()["error"].startswith("where 'dat >= 2024': ") and "'dat'" in r.text
    r = _search(client, where="authority >= gov")  # tier names are checked against the tiers in force
    assert r.status_code == 400 and "authority value 'gov' cannot be read" in r.json()["error"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]["SearchBody"]["properties"]
    assert schema["where"]["anyOf"][0]["format"] == "tanglerag-where"


def test_the_body_is_checked_as_asks_is(tmp_path):
    with client_for(make_runtime(tmp_path, overrides=["service.max_question_chars=20"])) as client:
        long = _search(client, "x" * 21)
        assert long.status_code == 422 and long.json()["error"] == "query: longer than 20 characters"
        properties = client.get("/openapi.json").json()["components"]["schemas"]["SearchBody"]["properties"]
        assert properties["query"]["maxLength"] == 20
        for body in ({"query": "   "}, {"query": "x", "top_k": 0}, {"query": "x", "top_k": "3"}, {"query": "x", "k": 3},
                     {}):
            r = client.post("/v1/search", json=body)
            assert r.status_code == 422 and isinstance(r.json()["error"], str), (body, r.text)


def test_without_an_index_it_is_a_409(tmp_path):
    with client_for(make_runtime(tmp_path, with_index=False)) as client:
        r = _search(client)
        assert r.status_code == 409 and "no index yet" in r.json()["error"]


def test_passages_are_clipped_as_an_answers_are(tmp_path):
    with client_for(make_runtime(tmp_path, overrides=["service.max_passage_chars=10"])) as client:
        text = _search(client, top_k=1).json()["passages"][0]["text"]
        assert text.startswith("Paris is t [... ") and "more characters not shown" in text


def test_keys_a_user_key_searches_the_served_index_and_may_not_ask_for_more_passages(keyed):
    assert _search(keyed).status_code == 401
    admin = _search(keyed, headers=bearer(ADMIN), top_k=3).json()["passages"]
    alice = _search(keyed, headers=bearer(ALICE), top_k=3)
    assert alice.status_code == 200 and alice.json()["passages"] == admin
    assert len(_search(keyed, headers=bearer(ALICE), top_k=1).json()["passages"]) == 1
    more = _search(keyed, headers=bearer(ALICE), top_k=4)
    assert more.status_code == 403 and more.json()["error"].startswith("top_k: 4 passages is more than this server's 3")
    assert _search(keyed, headers=bearer(ADMIN), top_k=4).status_code == 200
    assert _no_model_call(keyed)
