"""The stores wired into the product (issue 62): ``tanglerag index --store qdrant`` writes a Qdrant collection (local
mode), ``search`` and ``ask`` read it and give the passages the embedded index gives for the same corpus and
embedder; a store that cannot be reached is one line on the command line and a 503 in OpenAI's shape from the
service, whose ``/readyz`` then says not ready."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tanglerag.api import Tanglerag
from tanglerag.cli import app
from tanglerag.errors import InputError
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime, SearchRequest
from tanglerag.service.app import create_app
from tanglerag.settings import Settings
from tanglerag.stores.base import StoreError
from tanglerag.testing import CannedBackend, HashEmbedder
from tests.hashing_cli import HashingEmbedder

pytest.importorskip("qdrant_client")
runner = CliRunner()
DOCUMENTS = [
    {"id": "leave", "title": "Leave policy", "text": "Staff take five days of leave a year.", "date": "2024-03-01",
     "source": "HR.example.org", "authority": "official", "meta": {"lang": "en"}},
    {"id": "notes", "title": "Notes", "text": "Leave is five days, the notes say; ask the office.", "date": "2019",
     "source": "notes", "meta": {"lang": "fr", "pages": 2}},
    {"id": "tea", "title": "Tea", "text": "Green tea is steeped at eighty degrees for two minutes."},
    {"id": "office", "title": "Office", "text": "The office opens at nine and closes at five.", "date": "2023-11",
     "source": "hr.example.org", "authority": 1},
]
DOWN = "http://reader:s3cret@127.0.0.1:9"
"""A server nobody listens on (the discard port), with credentials that must never be shown."""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The command line on the hashing embedder and a canned LLM; ``run(args)`` returns the output."""
    monkeypatch.setattr("tanglerag.runtime.Embedder", HashingEmbedder)
    monkeypatch.setattr("tanglerag.runtime.build_llm", lambda *a, **k: LLM(CannedBackend(default="five days [1]"),
                                                                            CallCache(None)))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS))

    def run(*args: str, exit_code: int = 0, stdout: bool = True) -> str:
        result = runner.invoke(app, [*args, "--set", f"cache_dir={tmp_path / 'cache'}"], env={"COLUMNS": "300"})
        assert result.exit_code == exit_code, result.output
        return result.stdout if exit_code == 0 and stdout else result.output

    run("index", str(corpus), "--out", str(tmp_path / "idx"))
    run("index", str(corpus), "--store", "qdrant", "--store-path", str(tmp_path / "qd"), "--collection", "docs")
    return run


def _stored(tmp_path: Path) -> list[str]:
    return ["--store", "qdrant", "--store-path", str(tmp_path / "qd"), "--collection", "docs"]


def _ranked(output: str) -> list[tuple[str, float]]:
    return [(p["id"], round(p["score"], 4)) for p in json.loads(output)["passages"]]


@pytest.mark.parametrize("where", [None, "date >= 2023", "source = hr.example.org", "meta.lang = FR",
                                   "authority >= 1 and date != 2024-03"])
def test_search_over_the_store_gives_the_embedded_index_passages(cli, tmp_path, where):
    filtered = ["--where", where] if where else []
    embedded = cli("search", "how many days of leave", "--json", "-k", "3", *filtered, "--index", str(tmp_path / "idx"))
    stored = cli("search", "how many days of leave", "--json", "-k", "3", *filtered, *_stored(tmp_path))
    assert _ranked(stored) == _ranked(embedded)
    assert _ranked(stored)


def test_ask_over_the_store_answers_from_the_same_passages(cli, tmp_path):
    embedded = json.loads(cli("ask", "How many days of leave?", "--json", "--index", str(tmp_path / "idx")))
    stored = json.loads(cli("ask", "How many days of leave?", "--json", *_stored(tmp_path)))
    assert [p["id"] for p in stored["passages"]] == [p["id"] for p in embedded["passages"]]
    assert stored["answer"] == embedded["answer"]


def test_writing_again_replaces_rather_than_duplicates(cli, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    out = cli("index", str(corpus), *_stored(tmp_path), stdout=False)
    assert f"{len(DOCUMENTS)} held" in out


def test_index_and_store_together_or_neither_are_refused(cli, tmp_path):
    both = cli("search", "leave", "--index", str(tmp_path / "idx"), *_stored(tmp_path), exit_code=2)
    assert "give one of them" in both
    neither = cli("search", "leave", exit_code=2)
    assert "--index DIR" in neither and "--store" in neither


def test_a_filter_the_store_cannot_express_is_one_line(cli, tmp_path):
    out = cli("search", "leave", "--where", "source > m", *_stored(tmp_path), exit_code=2)
    assert out.count("\n") == 1 and "source > m" in out


def test_a_store_that_is_down_is_one_line_without_credentials(cli, tmp_path):
    out = cli("search", "leave", "--store", "qdrant", "--store-url", DOWN, "--collection", "docs", exit_code=2)
    assert out.startswith("error: qdrant at http://***@127.0.0.1:9") and out.count("\n") == 1
    assert "s3cret" not in out


def test_a_collection_of_other_dimensions_is_refused_in_one_line(cli, tmp_path):
    runtime = Runtime(Settings.load(overrides=["store.backend=qdrant", f"store.path={tmp_path / 'qd'}",
                                               "store.collection=docs"]), embedder=HashEmbedder(dim=32))
    with pytest.raises(StoreError, match="holds vectors of 64 dimensions but the embedder") as raised:
        runtime.search(SearchRequest(query="leave"))
    assert "\n" not in str(raised.value)


def test_methods_that_need_the_embedded_index_refuse_a_store(cli, tmp_path):
    personal = cli("ask", "How many days?", "--user", "ann", *_stored(tmp_path), exit_code=2)
    assert ("a question with a user needs ranking with a user's statements (PCAS): store.backend=qdrant offers "
            "dense search") in personal and personal.count("\n") == 1
    hybrid = cli("search", "leave", "--set", "retrieval.mode=hybrid", *_stored(tmp_path), exit_code=2)
    assert "retrieval.mode=hybrid needs BM25 and hybrid ranking" in hybrid and hybrid.count("\n") == 1


def test_every_store_declares_what_it_offers_and_a_missing_one_is_refused_in_one_place():
    from tanglerag.stores.registry import STORES, capabilities, require

    for name in STORES.names():
        settings = Settings.load(overrides=[f"store.backend={name}"])
        assert "dense search" in capabilities(settings).offered()
    embedded, qdrant = Settings.load(), Settings.load(overrides=["store.backend=qdrant"])
    require(embedded, "separations", "cdit trim")  # the embedded index offers everything
    with pytest.raises(InputError, match="cdit trim needs CDIT's separations: store.backend=qdrant offers dense "
                                         "search$"):
        require(qdrant, "separations", "cdit trim")


def _down_runtime(tmp_path: Path) -> Runtime:
    settings = Settings.load(overrides=["store.backend=qdrant", f"store.url={DOWN}", "store.collection=docs",
                                        "store.timeout_s=2", f"personal.store_dir={tmp_path / 'users'}"])
    return Runtime(settings, llm=LLM(CannedBackend(default="x"), CallCache(None)), embedder=HashEmbedder())


def test_the_service_answers_503_in_openai_shape_and_is_not_ready_while_the_store_is_down(tmp_path):
    with TestClient(create_app(_down_runtime(tmp_path)), raise_server_exceptions=True) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and "not ready" in ready.json()["error"]
        chat = client.post("/v1/chat/completions", json={"model": "concat", "messages": [
            {"role": "user", "content": "How many days of leave?"}]})
        assert chat.status_code == 503
        error = chat.json()["error"]
        assert error["code"] == "store_unavailable" and error["type"] == "server_error"
        assert "s3cret" not in chat.text and "127.0.0.1" not in chat.text
        asked = client.post("/v1/ask", json={"question": "How many days of leave?"})
        assert asked.status_code == 503 and "s3cret" not in asked.text


def test_the_python_api_searches_the_store_as_the_index(cli, tmp_path):
    embedded = Tanglerag(tmp_path / "idx", Settings.load(), embedder=HashEmbedder())
    stored = Tanglerag(settings=Settings.load(overrides=["store.backend=qdrant", f"store.path={tmp_path / 'qd'}",
                                                         "store.collection=docs"]), embedder=HashEmbedder())
    for where in (None, "date >= 2023"):
        assert ([h.passage.id for h in stored.search("days of leave", where=where)]
                == [h.passage.id for h in embedded.search("days of leave", where=where)])


def test_eval_retrieves_from_the_store_as_from_the_index(cli, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "How many days of leave?", "answers": ["five days"]})
                         + "\n")
    runs = {}
    for name, source in (("embedded", ["--index", str(tmp_path / "idx")]), ("stored", _stored(tmp_path))):
        cli("eval", "--dataset", str(questions), "--out", str(tmp_path / name), "--quiet", *source)
        [line] = (tmp_path / name / "predictions.jsonl").read_text().splitlines()
        runs[name] = json.loads(line)["passage_ids"]
    assert runs["stored"] == runs["embedded"] and runs["stored"]


def test_no_module_outside_stores_branches_on_a_store_backend_name():
    """What a store can do is its capabilities': a branch on ``store.backend``'s value elsewhere is the second
    retrieval world coming back."""
    import re

    import tanglerag

    root = Path(tanglerag.__file__).parent
    names = "|".join(("embedded", "qdrant", "lancedb", "chroma"))
    branch = re.compile(rf"backend\s*(?:[!=]=|in|not in)\s*[(\[{{]?\s*[\"'](?:{names})[\"']")
    found = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py") if "stores" not in path.parts
             for n, line in enumerate(path.read_text().splitlines(), 1) if branch.search(line)]
    assert found == []


def test_a_store_is_kept_in_step_with_a_folder_from_the_command_line(cli, tmp_path):
    """Issue 68's reproduction: a file edited from many chunks down to one and another deleted; a plain re-index
    replaces the edited file's chunks whole, --sync removes the deleted file, --remove takes a document out."""
    fold = tmp_path / "fold"
    fold.mkdir()
    (fold / "policy.md").write_text("# Policy\n\n" + "\n\n".join(
        f"Section {i}: the old allowance was {100 + i} euros. " + "filler text words " * 120 for i in range(6)))
    (fold / "gone.md").write_text("# Gone\n\nThis file will be deleted. The secret code is ZEBRA.")
    store = ("--store", "qdrant", "--store-path", str(tmp_path / "qd"), "--collection", "fold")
    cli("index", str(fold), *store)
    (fold / "policy.md").write_text("# Policy\n\nThe allowance is now 999 euros.\n")
    (fold / "gone.md").unlink()
    again = cli("index", str(fold), *store, stdout=False)
    assert "stale chunks of their documents removed" in again and "2 held" in again  # policy.md#0 and gone.md
    synced = cli("index", str(fold), "--sync", *store, stdout=False)
    assert "1 deleted" in synced and "1 held" in synced
    found = cli("search", "old allowance euros", "--top-k", "8", *store)
    assert "999" in found and "100 euros" not in found and "ZEBRA" not in found
    assert "removed 1 passages; 0 held" in cli("index", "--remove", "policy.md", *store, stdout=False)
    assert "holds no document 'policy.md'" in cli("index", "--remove", "policy.md", *store, exit_code=2)


def test_a_store_sync_reads_authorities_with_the_tiers_in_force(cli, tmp_path):
    """--sync into a store chunks a folder as --sync into an index does: a tier named only in
    ledger.authority_tiers is read, not refused."""
    fold = tmp_path / "tiers"
    fold.mkdir()
    (fold / "notice.md").write_text("---\nauthority: gazette\n---\n# Notice\n\nThe office closes at five.\n")
    store = ("--store", "qdrant", "--store-path", str(tmp_path / "qd"), "--collection", "tiers")
    synced = cli("index", str(fold), "--sync", *store, "--set", 'ledger.authority_tiers={"gazette": 4}', stdout=False)
    assert "wrote 1 passages" in synced and "1 held" in synced
