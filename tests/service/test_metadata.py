"""Document metadata over HTTP (issue 50, item 1): uploads carry it (JSONL fields, Markdown front matter), /v1/ask's
``retrieval.where`` option filters by it, every passage and chat source shows it, and bad metadata is a 400 naming
the field with the index left as it was."""

from __future__ import annotations

JSONL = {"Content-Type": "application/x-ndjson"}
RECORDS = (b'{"id": "old", "title": "Oslo 1990", "text": "Oslo is the capital of Norway.", "date": "1990", '
           b'"source": "atlas.org"}\n'
           b'{"id": "new", "title": "Oslo 2024", "text": "Oslo is the capital of Norway, as ever.", '
           b'"date": "2024-03-01", "source": "gov.no", "authority": "official", "meta": {"lang": "no"}}\n')
NOTE = b"---\ntitle: Oslo note\ndate: 2024-05\nsource: wiki\n---\nOslo is the capital of Norway (note).\n"


def _ask(client, where: str | None = None, **extra):
    options = {"retrieval.where": where} if where is not None else {}
    return client.post("/v1/ask", json={"question": "capital of Norway Oslo", "top_k": 6, "options": options, **extra})


def _upload(client) -> None:
    assert client.post("/v1/index/documents", content=RECORDS, headers=JSONL).json()["added"] == 2
    assert client.post("/v1/index/documents", files=[("files", ("notes/oslo.md", NOTE, "text/markdown"))]
                       ).json()["added"] == 1


def test_uploaded_metadata_is_shown_and_filtered(client):
    _upload(client)
    shown = {p["id"]: (p.get("date"), p.get("source")) for p in _ask(client).json()["passages"]}
    assert shown["old"] == ("1990", "atlas.org") and shown["new"] == ("2024-03-01", "gov.no")
    undated = [p for p in _ask(client).json()["passages"] if p["id"] not in ("old", "new", "notes/oslo.md")]
    assert shown["notes/oslo.md"] == ("2024-05", "wiki") and undated and all("date" not in p for p in undated)
    recent = _ask(client, "date >= 2024-01-01").json()["passages"]
    assert sorted(p["id"] for p in recent) == ["new", "notes/oslo.md"]
    assert [p["id"] for p in _ask(client, "source in (gov.no, atlas.org) and meta.lang = no").json()["passages"]] == [
        "new"]
    assert [p["id"] for p in _ask(client, "authority >= official").json()["passages"]] == ["new"]
    assert _ask(client, "").json()["passages"]  # empty: no filter


def test_a_where_that_cannot_be_read_is_a_400_naming_it(client):
    r = _ask(client, "dat >= 2024")
    assert r.status_code == 400 and r.json()["error"].startswith("option retrieval.where: Value error, where 'dat ")
    assert "unknown field 'dat'" in r.json()["error"]
    r = _ask(client, "authority >= gov")  # tier names are checked against the tiers in force
    assert r.status_code == 400 and "authority value 'gov' cannot be read" in r.json()["error"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]["Options"]["properties"]["retrieval.where"]
    assert schema["anyOf"][0]["format"] == "tanglerag-where"


def test_a_where_with_a_user_is_refused_rather_than_ignored(client):
    # the personal retriever ranks the whole index: a filter it would not apply is refused, as ask --user refuses it
    r = client.post("/v1/ask", json={"question": "What is the capital of France?", "user": "alice",
                                     "options": {"retrieval.where": "date >= 2024"}})
    assert r.status_code == 400 and "does not apply to a question with a user" in r.json()["error"]


def test_chat_sources_show_each_documents_date_and_source(tmp_path):
    from tanglerag.testing import CannedBackend
    from tests.service.conftest import client_for, make_runtime

    backend = CannedBackend([("capital of Norway", "Oslo [1] [2]")], default="unknown")
    with client_for(make_runtime(tmp_path, backend=backend)) as client:
        _upload(client)
        reply = client.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
            {"role": "user", "content": "capital of Norway Oslo"}]}).json()
    sources = reply["choices"][0]["message"]["content"].split("Sources:\n", 1)[1].splitlines()
    shown = {"new": "2024-03-01 · gov.no", "old": "1990 · atlas.org", "notes/oslo.md": "2024-05 · wiki"}
    cited = [p["id"] for p in reply["tanglerag"]["passages"][:2]]
    titles = {"new": "Oslo 2024", "old": "Oslo 1990", "notes/oslo.md": "Oslo note"}
    assert sources == [f"[{n}] {titles[pid]} ({pid}) · {shown[pid]}" for n, pid in enumerate(cited, 1)]


def test_bad_metadata_is_a_400_naming_the_document_and_field_and_keeps_the_index(client):
    before = client.get("/v1/index").json()["manifest"]
    r = client.post("/v1/index/documents", content=b'{"id": "a", "text": "x", "date": "last week"}\n', headers=JSONL)
    assert r.status_code == 400 and r.json()["error"].startswith("upload: document 'a': metadata field 'date'")
    r = client.post("/v1/index/documents", content=b'{"id": "a", "text": "x", "authority": "rumour"}\n', headers=JSONL)
    assert r.status_code == 400 and "metadata field 'authority': unknown tier 'rumour'" in r.json()["error"]
    r = client.post("/v1/index/documents", files=[("files", ("n.md", b"---\ntitle: [x\n---\nBody\n", "text/markdown"))])
    assert r.status_code == 400 and r.json()["error"].startswith("n.md: front matter is not valid YAML at line 3")
    r = client.put("/v1/index/documents/p1", json={"text": "Paris.", "metadata": {"date": "2024-13-01"}})
    assert r.status_code == 400 and "metadata field 'date'" in r.json()["error"]
    assert client.get("/v1/index").json()["manifest"] == before
