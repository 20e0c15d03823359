"""Issue 50, item 1: a document's metadata round-trips through every path that writes or reads it - real ``tanglerag``
processes (index, ``--add``, ``--replace``, ``--remove``, ``ask --where``) and the real HTTP server (uploads, PUT,
DELETE, ``/v1/ask`` options, chat) - and bad metadata is one line naming the field, with nothing stored lost."""

import json
import os
import subprocess
from pathlib import Path

import httpx

from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm, fake_openai_server
from tests.hashing_cli import HASHING_CLI
from tests.index.stored import stored_passages

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
LONG = " ".join(f"harbour{i} lighthouse keeper" for i in range(140))  # 420 words: three chunks at 200 / 40
QUESTION = "Who kept the lighthouse on the harbour?"


def _stored(folder: Path) -> dict[str, dict]:
    """Passage id -> metadata, as stored (less a file's sha256, which issue 51's tests check)."""
    return {p.id: {k: v for k, v in p.metadata.items() if k != "sha256"} for p in stored_passages(folder)}


def _cli(*args: str, code: int = 0) -> str:
    """Run the CLI, expect ``code`` (2: a user error, no traceback); what it said, on one line."""
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == code and "Traceback" not in said, said
    return said


def _jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_index_add_replace_and_remove_keep_each_documents_metadata_on_every_chunk(tmp_path):
    folder, common = tmp_path / "idx", ["--bm25", "--set", f"cache_dir={tmp_path / 'cache'}"]
    guide = {"id": "guide", "title": "Guide", "text": LONG, "date": "2023-05", "source": "harbour.org"}
    _cli("index", str(_jsonl(tmp_path / "a.jsonl", guide)), "--out", str(folder), *common)
    assert {pid: m["date"] for pid, m in _stored(folder).items()} == {f"guide#{i}": "2023-05" for i in range(3)}

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("---\ntitle: Keeper's note\ndate: 2024-06-01\nauthority: official\n---\n"
                                  "Amundsen kept the lighthouse.\n")
    _cli("index", str(docs), "--out", str(folder), "--add", *common[1:])
    assert _stored(folder)["note.md"] == {"date": "2024-06-01", "authority": "official", "path": "note.md"}

    redated = _jsonl(tmp_path / "b.jsonl", guide | {"date": "2024-01-01", "meta": {"edition": 2}})
    before = _stored(folder)
    said = _cli("index", str(redated), "--out", str(folder), "--add", *common[1:], code=2)
    assert "document id 'guide' already in the index with other text or metadata" in said and _stored(folder) == before
    _cli("index", str(redated), "--out", str(folder), "--add", "--replace", *common[1:])
    after = _stored(folder)
    assert [(after[f"guide#{i}"]["date"], after[f"guide#{i}"]["meta"]) for i in range(3)] == [
        ("2024-01-01", {"edition": 2})] * 3 and after["note.md"] == before["note.md"]

    _cli("index", "--out", str(folder), "--remove", "guide", *common[1:])
    assert list(_stored(folder)) == ["note.md"]


def test_bad_metadata_is_one_line_naming_the_document_and_field_and_nothing_stored_is_lost(tmp_path):
    folder, cache = tmp_path / "idx", ["--set", f"cache_dir={tmp_path / 'cache'}"]
    _cli("index", str(_jsonl(tmp_path / "a.jsonl", {"id": "a", "text": "A note.", "date": "2020"})), "--out",
         str(folder), *cache)
    before = _stored(folder)
    cases = [({"id": "b", "text": "x", "date": "next spring"}, "document 'b': metadata field 'date': cannot read"),
             ({"id": "b", "text": "x", "authority": "rumour"}, "document 'b': metadata field 'authority': unknown tier"),
             ({"id": "a", "text": "A note.", "date": "2020-02-30"}, "document 'a': metadata field 'date'")]
    for record, message in cases:
        for flags in ([], ["--add"], ["--add", "--replace"]):
            said = _cli("index", str(_jsonl(tmp_path / "bad.jsonl", record)), "--out", str(folder), *flags, *cache,
                        code=2)
            assert said.startswith("error: ") and message in said, said
            assert _stored(folder) == before
    custom = ["--set", "ledger.authority_tiers={rumour: 0.5}"]  # the tiers in force decide which names pass
    _cli("index", str(_jsonl(tmp_path / "ok.jsonl", cases[1][0])), "--out", str(folder), "--add", *cache, *custom)
    assert _stored(folder)["b"]["authority"] == "rumour"


def test_ask_filters_and_shows_metadata_from_a_real_process(tmp_path):
    folder, cache = tmp_path / "idx", ["--set", f"cache_dir={tmp_path / 'cache'}"]
    corpus = _jsonl(tmp_path / "c.jsonl",
                    {"id": "old", "text": "Olsen kept the lighthouse on the harbour.", "date": "1990",
                     "source": "archive.org"},
                    {"id": "new", "text": "Amundsen kept the lighthouse on the harbour.", "date": "2024-03-01",
                     "source": "harbour.org", "meta": {"lang": "en"}})
    _cli("index", str(corpus), "--out", str(folder), "--bm25", *cache)
    with fake_openai_server(lambda body: "Amundsen [1]") as server:
        common = ["--index", str(folder), "--set", "retrieval.mode=bm25", "--set", "llm.backend=openai", "--set",
                  f"llm.base_url={server['base_url']}", *cache]
        shown = json.loads(_run_json("ask", QUESTION, "--json", "--where", "date >= 2024-01-01", *common))
        assert [(p["id"], p["date"], p["source"]) for p in shown["passages"]] == [("new", "2024-03-01", "harbour.org")]
        shown = json.loads(_run_json("ask", QUESTION, "--json", "--set", "retrieval.where=meta.lang != en", *common))
        assert [p["id"] for p in shown["passages"]] == []  # 'old' has no meta.lang: it matches no condition on it
        printed = _cli("ask", QUESTION, "--where", "source in (archive.org, harbour.org)", *common)
        assert "1990 · archive.org Olsen kept" in printed and "2024-03-01 · harbour.org Amundsen kept" in printed
        asked = server["requests"]
        said = _cli("ask", QUESTION, "--where", "date >= 2024 and", *common, code=2)
        assert said == ("error: where 'date >= 2024 and': ends where a field (date, source, authority or meta.KEY) "
                        "was expected") and server["requests"] == asked


def _run_json(*args: str) -> str:
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_the_http_server_keeps_filters_and_shows_metadata(tmp_path):
    from tests.reliability.serving import served

    runtime = Runtime(Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "retrieval.top_k=5"]),
                      index_dir=tmp_path / "index", llm=canned_llm([("lighthouse", "Amundsen [1]")]),
                      embedder=HashEmbedder())
    jsonl = {"Content-Type": "application/x-ndjson"}
    records = (json.dumps({"id": "guide", "text": LONG, "date": "2023-05", "source": "harbour.org"}) + "\n"
               + json.dumps({"id": "old", "text": "Olsen kept the lighthouse.", "date": "1990"}) + "\n").encode()
    note = b"---\ndate: 2024-06-01\nsource: keeper's log\n---\nAmundsen kept the lighthouse on the harbour.\n"
    with served(runtime) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert http.post("/v1/index/documents", content=records, headers=jsonl).json()["added"] == 4
        assert http.post("/v1/index/documents", files=[("files", ("logs/note.md", note, "text/markdown"))]
                         ).json()["added"] == 1
        same = http.post("/v1/index/documents", content=records, headers=jsonl).json()
        redated = records.replace(b'"date": "1990"', b'"date": "1991"')
        refused = http.post("/v1/index/documents", content=redated, headers=jsonl)
        swapped = http.post("/v1/index/documents?replace=true", content=redated, headers=jsonl).json()
        put = http.put("/v1/index/documents/old", json={"text": "Olsen kept the lighthouse.",
                                                        "metadata": {"date": "1992", "source": "archive.org"}}).json()
        bad = http.post("/v1/index/documents", content=b'{"id": "x", "text": "y", "date": "soon"}\n', headers=jsonl)
        recent = http.post("/v1/ask", json={"question": QUESTION, "options": {"retrieval.where": "date >= 2024"}})
        every = http.post("/v1/ask", json={"question": QUESTION}).json()["passages"]
        malformed = http.post("/v1/ask", json={"question": QUESTION, "options": {"retrieval.where": "date >="}})
        chat = http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
            {"role": "user", "content": QUESTION}]})
        removed = http.delete("/v1/index/documents/guide").json()
    assert same["already_present"] == 4 and refused.status_code == 409 and swapped["replaced"] == ["old"]
    assert put["replaced"] == ["old"] and bad.status_code == 400
    assert bad.json()["error"] == ("upload: document 'x': metadata field 'date': cannot read 'soon' as an ISO date "
                                   "(YYYY-MM-DD or YYYY-MM) or a year")
    assert [(p["id"], p["date"], p["source"]) for p in recent.json()["passages"]] == [
        ("logs/note.md", "2024-06-01", "keeper's log")]
    assert {p["id"]: (p.get("date"), p.get("source")) for p in every}["old"] == ("1992", "archive.org")
    assert malformed.status_code == 400 and "where 'date >=': ends where a value" in malformed.json()["error"]
    assert chat.status_code == 200 and " · " in chat.json()["choices"][0]["message"]["content"]
    assert removed["removed"] == 3
    stored = _stored(tmp_path / "index")
    assert stored == {"old": {"date": "1992", "source": "archive.org"},
                      "logs/note.md": {"date": "2024-06-01", "source": "keeper's log", "path": "logs/note.md"}}
