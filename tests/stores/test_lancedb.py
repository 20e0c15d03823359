"""LanceDB as a store (``tanglerag.stores.lancedb``) beyond the contract suite: the SQL literals, ``--where`` on
awkward metadata giving exactly what ``Where.matches`` gives, the ANN index past the threshold, and failures as one
line. The contract itself runs in ``test_contract.py`` (``backend_lancedb.py`` registers the backend)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

pytest.importorskip("lancedb")

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS  # noqa: E402
from tanglerag.stores.base import StoreError  # noqa: E402
from tanglerag.stores.lancedb import LanceDBStore  # noqa: E402
from tanglerag.stores.lancedb_filter import meta_terms, sql_text  # noqa: E402
from tanglerag.types import Passage  # noqa: E402
from tanglerag.where import parse_where  # noqa: E402

AWKWARD_TEXTS = ["a'b", "c\\d", "e\\'f", "'", "\\", "x\\", "a''b", "new\nline", "%_", "\" OR 1=1 --",
                 "x' OR '1'='1", "é ß ✓"]
META_VALUES = [None, True, False, 0, -0.0, 3, 3.5, -2, 1e20, 12345678901234567890, "3", "3.0", " 4 ", "abc", "ABC",
               "Straße", "strasse", "", "1e1", "true", "ß", "a'b", "c\\d", "inf", "nan", "1_000", "ǅ", "b",
               ["abc", 3], ["B", "x"], [], [None], {"a": 1}, [[1]], [True, "7"]]
WANTED = ["3", "3.0", "abc", "ABC", "strasse", "Straße", "", "true", "4", "1e1", "-0", "a'b", "c\\d", "inf", "1_000",
          "b", "ǆ", "2", "zzz"]
OPS = ["=", "!=", "<", "<=", ">", ">="]


def unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype("float32")
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def quoted(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


def test_sql_text_doubles_quotes_and_keeps_backslashes():
    assert sql_text("a'b") == "'a''b'"
    assert sql_text("c\\d") == "'c\\d'"
    assert sql_text("'") == "''''"


def test_each_awkward_text_matches_only_itself_in_a_real_filter(tmp_path):
    import lancedb
    import pyarrow as pa

    table = lancedb.connect(tmp_path).create_table("t", data=pa.table({"s": AWKWARD_TEXTS}))
    for text in AWKWARD_TEXTS:
        found = table.search().where(f"s = {sql_text(text)}").to_list()
        assert [row["s"] for row in found] == [text]


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """One passage per awkward meta value (under ``k``, and beside another under ``m``), sources and dates of every
    kind, written once."""
    sources = ["Example.org", " padded ", "123", "Straße", "STRASSE", "ǅ", None, "", 5, "a'b"]
    dates = ["2024", "2024-03", "2024-03-15", "2023-12-31", "not a date", None, "2025-01"]
    authorities = ["official", 2, 0.5, "no such tier", None]
    metadata = [{"meta": {"k": value, "m": META_VALUES[-i - 1]}, "source": source, "date": date, "authority": authority}
                for i, (value, source, date, authority) in enumerate(
                    zip(META_VALUES, itertools.cycle(sources), itertools.cycle(dates), itertools.cycle(authorities)))]
    metadata += [{"meta": "not an object"}, {"meta": None}, {}]
    passages = [Passage(id=f"p{i}", text=f"text {i}", metadata=m) for i, m in enumerate(metadata)]
    store = LanceDBStore("awkward", path=tmp_path_factory.mktemp("lancedb"))
    store.upsert(passages, unit_rows(len(passages), 8))
    yield store, passages
    store.close()


def _where_texts() -> list[str]:
    texts = [f"meta.k {op} {quoted(value)}" for op in OPS for value in WANTED]
    texts += [f"meta.k in ({quoted(a)}, {quoted(b)})" for a, b in [("3", "abc"), ("b", "true"), ("1e1", "x")]]
    texts += [f"source {op} {quoted(value)}" for op in OPS for value in ["example.org", "ǆ", "padded", "strasse", "Straße", "m", "123"]]
    texts += [f"date {op} {value}" for op in OPS for value in ["2024", "2024-03", "2024-03-15"]]
    texts += [f"authority {op} {value}" for op in OPS for value in ["official", "0.5", "2"]]
    texts += ["meta.k != 3 and meta.m > abc", "source in ('Example.org', \"a'b\") and date >= 2024"]
    return texts


@pytest.mark.parametrize("text", _where_texts())
def test_where_on_awkward_metadata_passes_what_where_matches(awkward, text):
    store, passages = awkward
    where = parse_where(text, DEFAULT_AUTHORITY_TIERS)
    assert where is not None
    refused = store.unsupported(where)
    if refused is not None:
        assert text.startswith("source"), refused  # only a source compared with a number
        assert "\n" not in refused
        with pytest.raises(StoreError):
            store.search(unit_rows(1, 8, seed=1)[0], len(passages), where)
        return
    found = store.search(unit_rows(1, 8, seed=1)[0], len(passages), where)
    assert {hit.passage.id for hit in found} == {p.id for p in passages if where.matches(p.metadata)}


def test_a_source_is_refused_only_when_compared_with_a_number(awkward):
    store, _ = awkward
    for text, refused in [("source = Straße", False), ("source = 123", True), ("source < 1e3", True)]:
        where = parse_where(text, DEFAULT_AUTHORITY_TIERS)
        assert where is not None
        assert (store.unsupported(where) is not None) is refused, text


def test_meta_terms_keep_key_and_value_apart():
    """A key holding a separator or a quote cannot pass for another key's value."""
    tricky = {'a", "t': "x", "a": 'x", "t'}
    terms = meta_terms({"meta": tricky})
    assert sorted(json.loads(term)[0] for term in terms) == sorted(list(tricky) * 3)  # present, text, non-number text
    assert {tuple(json.loads(term)[1:]) for term in terms if json.loads(term)[0] == "a"} == {
        ("p", ""), ("t", 'x", "t'), ("x", 'x", "t')}


def test_an_ann_index_is_built_past_the_threshold_and_keeps_recall(tmp_path):
    rng = np.random.default_rng(5)
    centers = rng.normal(size=(40, 32))
    rows = (centers[rng.integers(0, 40, 3000)] + 0.4 * rng.normal(size=(3000, 32))).astype("float32")
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    passages = [Passage(id=f"r{i}", text=f"row {i}", metadata={"source": "even" if i % 2 == 0 else "odd"})
                for i in range(len(rows))]
    store = LanceDBStore("big", path=tmp_path, ann_min_rows=2000)
    store.upsert(passages[:1500], rows[:1500])
    assert not list(store._existing().list_indices())  # below the threshold: exact scans
    store.upsert(passages[1500:], rows[1500:])
    assert list(store._existing().list_indices())
    even = parse_where("source = even", DEFAULT_AUTHORITY_TIERS)
    recalls = []
    for query in rows[rng.integers(0, len(rows), 20)] + 0.05 * rng.normal(size=(20, 32)).astype("float32"):
        exact = set(np.argsort(-(rows @ query))[:10])
        recalls.append(len(exact & {int(h.passage.id[1:]) for h in store.search(query, 10)}) / 10)
        filtered = store.search(query, 10, even)
        assert len(filtered) == 10 and all(int(h.passage.id[1:]) % 2 == 0 for h in filtered)
    assert np.mean(recalls) >= 0.95


def test_a_missing_collection_is_empty_and_one_line_on_search(tmp_path):
    store = LanceDBStore("nothing", path=tmp_path)
    assert (store.count(), store.dimension()) == (0, None)
    with pytest.raises(StoreError, match=f"lancedb at {tmp_path}.*no collection 'nothing'") as raised:
        store.search(unit_rows(1, 4)[0], 3)
    assert "\n" not in str(raised.value)


def test_storage_that_cannot_be_reached_is_one_line_without_credentials(tmp_path):
    (tmp_path / "a file").write_text("not a folder")
    for store in (LanceDBStore("c", path=tmp_path / "a file" / "db"),
                  LanceDBStore("c", url="nosuchscheme://user:secret@host/db")):
        with pytest.raises(StoreError) as raised:
            store.count()
        message = str(raised.value)
        assert message.startswith("lancedb at ") and "\n" not in message and "secret" not in message
        assert ".rs:" not in message


def test_vectors_of_another_dimension_are_refused_and_nothing_is_written(tmp_path):
    store = LanceDBStore("c", path=tmp_path)
    store.upsert([Passage(id="a", text="one")], unit_rows(1, 4))
    with pytest.raises(StoreError, match="4 dimensions"):
        store.upsert([Passage(id="b", text="two")], unit_rows(1, 5))
    with pytest.raises(StoreError, match="4 dimensions, the query has 5"):
        store.search(unit_rows(1, 5)[0], 1)
    with pytest.raises(StoreError, match="2 passages but 1 vectors"):
        store.upsert([Passage(id="c", text="three"), Passage(id="d", text="four")], unit_rows(1, 4))
    assert store.count() == 1


def test_one_upsert_is_one_table_version(tmp_path):
    """A merge-insert commits once: readers see all of a write or none of it."""
    store = LanceDBStore("c", path=tmp_path)
    store.upsert([Passage(id=f"a{i}", text="x") for i in range(5)], unit_rows(5, 4))
    before = store._existing().version
    store.upsert([Passage(id=f"a{i}", text="y") for i in range(3, 9)], unit_rows(6, 4, seed=2))
    assert store._existing().version == before + 1
    assert store.count() == 9


def test_a_repeated_id_in_one_write_keeps_the_last(tmp_path):
    store = LanceDBStore("c", path=tmp_path)
    store.upsert([Passage(id="a", text="first"), Passage(id="a", text="second")], unit_rows(2, 4))
    assert store.count() == 1
    assert store.search(unit_rows(2, 4)[1], 1)[0].passage.text == "second"


def test_a_timeout_is_one_line(tmp_path):
    store = LanceDBStore("c", path=tmp_path, timeout_s=1e-9)
    store.upsert([Passage(id=f"a{i}", text="x") for i in range(50)], unit_rows(50, 4))
    with pytest.raises(StoreError, match="no answer within") as raised:
        store.search(unit_rows(1, 4)[0], 3)
    assert "\n" not in str(raised.value)


def test_memory_mode_needs_no_folder():
    store = LanceDBStore("c")
    store.upsert([Passage(id="a", text="x", metadata={"meta": {"lang": "fr"}})], unit_rows(1, 4))
    where = parse_where("meta.lang = FR", DEFAULT_AUTHORITY_TIERS)
    assert [h.passage.id for h in store.search(unit_rows(1, 4)[0], 1, where)] == ["a"]
