"""Chroma as a store (``tanglerag.stores.chroma``) beyond the contract suite, through both of its clients: recall of
its HNSW index at the ef we set, ``--where`` on awkward metadata giving exactly what ``Where.matches`` gives, values
Chroma cannot hold, all-or-nothing writes, and a server that is down, went down or does not answer as one line. The
server is a real ``chroma run`` process (``chroma_server``); the contract itself runs in ``test_contract.py``
(``backend_chroma.py`` registers ``chroma`` and ``chroma-server``)."""

from __future__ import annotations

import itertools
import json
import socket
import time

import numpy as np
import pytest

pytest.importorskip("chromadb")

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS  # noqa: E402
from tanglerag.stores.base import StoreError  # noqa: E402
from tanglerag.stores.chroma import CONSTRUCTION_EF, SEARCH_EF, ChromaStore  # noqa: E402
from tanglerag.types import Passage  # noqa: E402
from tanglerag.where import parse_where  # noqa: E402
from tests.stores.chroma_server import shared_server, start_server, stop_shared  # noqa: E402

META_VALUES = [None, True, False, 0, -0.0, 3, 3.5, -2, 1e20, 12345678901234567890, "3", "3.0", " 4 ", "abc", "ABC",
               "Straße", "strasse", "", "1e1", "true", "inf", "nan", "1_000", "ǅ", "b", ["abc", 3], ["B", "x"], [],
               [None], {"a": 1}, [[1]], [True, "7"], [1, 2.5, 9]]
WANTED = ["3", "3.0", "abc", "ABC", "strasse", "Straße", "", "true", "4", "1e1", "-0", "inf", "1_000", "b", "ǆ", "2",
          "9", "zzz"]
SOURCES = ["Example.org", " padded ", "123", "Straße", "STRASSE", "ǅ", None, "", "a'b"]
DATES = ["2024", "2024-03", "2024-03-15", "2023-12-31", None, "2025-01"]
AUTHORITIES = ["official", 2, 0.5, None, "news"]
OPS = ["=", "!=", "<", "<=", ">", ">="]


def unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype("float32")
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def quoted(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


@pytest.fixture(scope="module")
def server():
    """The real server, stopped when this module's tests are done."""
    yield shared_server()
    stop_shared()


def test_recall_at_10_against_exact_search_at_the_ef_we_set(tmp_path):
    """4,000 random vectors of 128 dimensions (random vectors are the hard case for HNSW), alone and with a filter
    passing a tenth of them: the ten Chroma returns against the exact ten."""
    rows = unit_rows(4000, 128)
    passages = [Passage(id=f"p{i}", text=f"text {i}", metadata={"source": f"s{i % 10}.org"}) for i in range(len(rows))]
    store = ChromaStore("recall", path=tmp_path)
    store.upsert(passages, rows)
    hnsw = store.client.get_collection("recall").configuration["hnsw"]
    assert (hnsw["space"], hnsw["ef_construction"], hnsw["ef_search"]) == ("cosine", CONSTRUCTION_EF, SEARCH_EF)
    queries = unit_rows(60, 128, seed=1)
    where = parse_where("source = s3.org")
    passing = np.array([i % 10 == 3 for i in range(len(rows))])
    for filtered in (False, True):
        found = 0
        for query in queries:
            scores = np.where(passing | (not filtered), rows @ query, -np.inf)
            exact = {f"p{i}" for i in np.argsort(-scores)[:10]}
            found += len(exact & {h.passage.id for h in store.search(query, 10, where if filtered else None)})
        assert found / (10 * len(queries)) >= 0.95, f"recall@10 {found / 600:.3f} (filtered: {filtered})"
    store.close()


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """One passage per awkward meta value (under ``k``, another under ``m``), with sources, dates and authorities of
    every kind, written once."""
    metadata = [{"meta": {"k": value, "m": META_VALUES[-i - 1]}, "source": source, "date": date, "authority": authority}
                for i, (value, source, date, authority) in enumerate(
                    zip(META_VALUES, itertools.cycle(SOURCES), itertools.cycle(DATES), itertools.cycle(AUTHORITIES)))]
    metadata += [{"meta": "not an object"}, {"meta": None}, {}]
    passages = [Passage(id=f"p{i}", text=f"text {i}", metadata=m) for i, m in enumerate(metadata)]
    store = ChromaStore("awkward", path=tmp_path_factory.mktemp("chroma"))
    store.upsert(passages, unit_rows(len(passages), 8))
    yield store, passages
    store.close()


def _where_texts() -> list[str]:
    texts = [f"meta.k {op} {quoted(value)}" for op in OPS for value in WANTED]
    texts += [f"meta.m {op} {quoted(value)}" for op in ("=", "!=", "<", ">=") for value in ("3", "abc", "9")]
    texts += [f"meta.k in ({quoted(a)}, {quoted(b)})" for a, b in [("3", "abc"), ("b", "true"), ("1e1", "x")]]
    texts += [f"source {op} {quoted(value)}" for op in OPS
              for value in ["example.org", "ǆ", "padded", "strasse", "Straße", "m", "123", "a'b"]]
    texts += ["source in ('STRASSE', 'Example.ORG')", "source in ('x', '12')"]
    texts += [f"date {op} {value}" for op in OPS for value in ["2024", "2024-03", "2024-03-15", "2023-12-31"]]
    texts += ["date in (2023, 2024-03-15)", "date in (2025-01, 2024-03)"]
    texts += [f"authority {op} {value}" for op in OPS for value in ["official", "0.5", "2"]]
    texts += ["authority in (news, 2)", "meta.k = abc and source != example.org", "meta.k != 3 and date >= 2024"]
    return texts


@pytest.mark.parametrize("text", _where_texts())
def test_awkward_metadata_passes_exactly_what_where_matches_passes(awkward, text):
    store, passages = awkward
    where = parse_where(text, DEFAULT_AUTHORITY_TIERS)
    assert where is not None
    refused = store.unsupported(where)
    if refused is not None:
        ordering = any(c.op in ("<", "<=", ">", ">=") and c.field != "date" and c.field != "authority"
                       for c in where.conditions)
        assert ordering or "number" in refused, refused
        with pytest.raises(StoreError):
            store.search(unit_rows(1, 8)[0], 5, where)
        return
    expected = {p.id for p in passages if where.matches(p.metadata)}
    assert {h.passage.id for h in store.search(unit_rows(1, 8)[0], len(passages), where)} == expected


def test_a_source_asked_for_by_a_number_is_refused(awkward):
    store, _ = awkward
    where = parse_where("source = 123")
    assert where is not None
    assert "compares a source with a number" in (store.unsupported(where) or "")


def test_values_chroma_cannot_hold_come_back_as_they_were(tmp_path):
    metadata = {"none": None, "big": 2**70, "mixed": [1, "a", None], "object": {"x": {"y": []}}, "empty": [],
                "blank": "", "negative_zero": -0.0, "flag": False, "count": 7, "ratio": 0.1}
    passage = Passage(id="weird id/with spaces#1", title="", text="t", metadata=metadata)
    store = ChromaStore("values", path=tmp_path)
    store.upsert([passage], unit_rows(1, 4))
    [hit] = store.search(unit_rows(1, 4)[0], 1)
    assert hit.passage == passage
    assert json.dumps(hit.passage.metadata, sort_keys=True) == json.dumps(metadata, sort_keys=True)


def test_a_batch_with_one_bad_passage_writes_nothing(tmp_path):
    store = ChromaStore("batch", path=tmp_path)
    store.upsert([Passage(id="a", text="first")], unit_rows(1, 4))
    ours = [Passage(id="b", text="fine"), Passage(id="c", text="clash", metadata={"_tr_source": "x"})]
    with pytest.raises(StoreError, match="_tr_source"):
        store.upsert(ours, unit_rows(2, 4))
    chromas = [Passage(id="b", text="fine"), Passage(id="c", text="refused by Chroma", metadata={"#document": "x"})]
    with pytest.raises(StoreError) as raised:
        store.upsert(chromas, unit_rows(2, 4))
    assert "\n" not in str(raised.value)
    assert store.count() == 1


def test_a_write_larger_than_chromas_batch_is_written_in_parts(tmp_path, monkeypatch):
    store = ChromaStore("parts", path=tmp_path)
    monkeypatch.setattr(store.client, "get_max_batch_size", lambda: 3)
    store.upsert([Passage(id=f"p{i}", text=f"text {i}") for i in range(8)], unit_rows(8, 4))
    assert store.count() == 8


def test_vectors_of_another_size_are_one_line(tmp_path):
    store = ChromaStore("sizes", path=tmp_path)
    store.upsert([Passage(id="a", text="first")], unit_rows(1, 4))
    assert store.dimension() == 4
    for call in (lambda: store.upsert([Passage(id="b", text="b")], unit_rows(1, 5)),
                 lambda: store.search(unit_rows(1, 5)[0], 1)):
        with pytest.raises(StoreError, match="dimension") as raised:
            call()
        assert "\n" not in str(raised.value)


def test_a_collection_in_chromas_own_layout_reads_with_the_default_mapping(tmp_path):
    """Text as the record's document and Chroma's id as the passage id, as Chroma's users keep them."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    held = client.create_collection("theirs", metadata={"hnsw:space": "cosine"}, embedding_function=None)
    held.add(ids=["x1", "x2"], embeddings=unit_rows(2, 4), documents=["one", "two"],
             metadatas=[{"source": "Theirs.org", "year": 2020}, {"source": "theirs.org"}])
    client.close()
    store = ChromaStore("theirs", path=tmp_path)
    top = store.search(unit_rows(2, 4)[0], 1)[0]
    assert (top.passage.id, top.passage.text, top.passage.metadata) == ("x1", "one", {"source": "Theirs.org",
                                                                                      "year": 2020})
    where = parse_where("source = theirs.org")
    assert where is not None
    with pytest.raises(StoreError, match="not written by tanglerag"):
        store.search(unit_rows(1, 4)[0], 1, where)
    with pytest.raises(StoreError, match="another tool wrote|its own layout"):
        ChromaStore("theirs", path=tmp_path, fields=store.fields.model_copy(update={"id": None})).delete(["x1"])


def test_the_server_answers_searches_and_filters_over_http(server):
    store = ChromaStore("over-http", url=server.url)
    passages = [Passage(id=f"p{i}", text=f"text {i}", metadata={"source": "A.org" if i % 2 else "b.org",
                                                                "date": f"202{i}"}) for i in range(6)]
    store.upsert(passages, unit_rows(6, 8))
    where = parse_where("source = a.ORG and date >= 2023")
    assert where is not None
    hits = store.search(unit_rows(6, 8)[5], 3, where)
    assert [h.passage.id for h in hits][0] == "p5"
    assert {h.passage.id for h in hits} == {"p3", "p5"}
    store.close()


def test_a_server_that_is_down_is_one_line_without_credentials():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = ChromaStore("any", url=f"http://reader:s3cret@127.0.0.1:{port}", timeout_s=5)
    with pytest.raises(StoreError) as raised:
        store.count()
    line = str(raised.value)
    assert "\n" not in line and "s3cret" not in line and "reader" not in line
    assert line.startswith(f"chroma at http://***@127.0.0.1:{port}")


def test_a_server_that_went_down_is_one_line(tmp_path):
    own = start_server(tmp_path)
    store = ChromaStore("gone", url=own.url, timeout_s=5)
    store.upsert([Passage(id="a", text="first")], unit_rows(1, 4))
    own.stop()
    with pytest.raises(StoreError) as raised:
        store.search(unit_rows(1, 4)[0], 1)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"chroma at {own.url}, collection 'gone': search failed")


def test_a_server_that_does_not_answer_times_out_in_one_line():
    with socket.socket() as silent:  # listens, so a connection is made, but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        store = ChromaStore("any", url=f"http://127.0.0.1:{silent.getsockname()[1]}", timeout_s=0.5)
        began = time.monotonic()
        with pytest.raises(StoreError, match=r"no answer within 0\.5 s") as raised:
            store.count()
        assert time.monotonic() - began < 5
        assert "\n" not in str(raised.value)


def test_a_missing_collection_on_the_server(server):
    store = ChromaStore("never-written", url=server.url)
    assert (store.count(), store.dimension()) == (0, None)
    with pytest.raises(StoreError, match="does not exist"):
        store.search(unit_rows(1, 4)[0], 1)
