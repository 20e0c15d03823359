"""The store contract (``tanglerag/stores/base.py``), run against every backend of ``backends.BACKENDS``.

A backend passes when it keeps passages and their metadata as given, ranks by cosine closest first, replaces a known
id, deletes, and filters exactly as ``Where.matches`` does on the same metadata (dates at the condition's precision,
source without regard to case, authority by tier name or number, ``meta.KEY`` by number or text), pushed down to its
own filter, or refuses a condition it cannot express (``unsupported``, then StoreError on search).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import StoreError
from tanglerag.types import Passage
from tanglerag.where import parse_where
from tests.stores.backends import DIMENSION, ForeignPoint

METADATA = [
    {"date": "2023", "source": "Example.org", "authority": "official", "meta": {"lang": "fr", "pages": 12}},
    {"date": "2024", "source": "example.org", "authority": "news", "meta": {"lang": "FR", "pages": "7"}},
    {"date": "2024-03", "source": "Le Monde", "authority": 2, "meta": {"lang": "en", "tags": ["a", "B"]}},
    {"date": "2024-03-15", "source": "lemonde", "authority": 0.5, "meta": {"lang": ["fr", "de"], "flag": True}},
    {"date": "2024-12-31", "source": "LE MONDE", "authority": "community", "meta": {"pages": 30.5}},
    {"date": "2025-01", "source": "other.net", "meta": {"flag": False, "nested": {"a": 1}}},
    {"date": "2024-03-01", "authority": "reference", "meta": {"pages": 3, "mixed": 5}},
    {"source": "Example.org", "meta": {"mixed": "abc"}},
    {"date": "2022-06-30", "source": "blog.example", "authority": 1},
    {},
]
WHERES = [
    "date = 2024", "date = 2024-03", "date = 2024-03-15", "date != 2024", "date != 2024-03", "date < 2024-03",
    "date <= 2024-03-15", "date > 2024", "date >= 2024-03-15", "date in (2023, 2024-03)", "date in (2022-06-30, 2025)",
    "source = example.org", "source = EXAMPLE.ORG", "source != example.org", "source in ('Le Monde', lemonde)",
    "authority = official", "authority = 3", "authority >= 0.5", "authority < reference", "authority != 2",
    "authority in (community, 2)", "authority > 1",
    "meta.lang = fr", "meta.lang = FR", "meta.lang != fr", "meta.lang in (en, de)", "meta.pages = 12", "meta.pages = 7",
    "meta.pages > 10", "meta.pages <= 12", "meta.pages != 3", "meta.tags = b", "meta.flag = true", "meta.flag != true",
    "meta.nested != x", "meta.missing = 1",
    "meta.lang = fr and date >= 2024", "source = example.org and authority >= 1 and date < 2025",
    "source > m", "meta.lang > e", "meta.mixed > 3",
]
MAY_REFUSE = {"source > m", "meta.lang > e", "meta.mixed > 3"}
"""Orderings of text (``Where`` orders text as text), which a store's filter on numbers cannot always express."""


def vectors(n: int, seed: int = 7) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, DIMENSION)).astype("float32")
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def corpus() -> list[Passage]:
    return [Passage(id=f"doc{i}#{i}", title=f"Title {i}", text=f"passage number {i}", metadata=m)
            for i, m in enumerate(METADATA)]


@pytest.fixture
def filled(open_store):
    store = open_store()
    store.upsert(corpus(), vectors(len(METADATA)))
    return store


def test_an_empty_collection_holds_nothing_and_has_no_dimension(open_store):
    store = open_store("never_written")
    assert store.count() == 0
    assert store.dimension() is None


def test_upsert_then_count_and_dimension(filled):
    assert filled.count() == len(METADATA)
    assert filled.dimension() == DIMENSION


def test_search_ranks_the_closest_first_with_cosine_scores(filled):
    rows = vectors(len(METADATA))
    query = rows[3] + 0.1 * rows[5]
    hits = filled.search(query, 4)
    expected = np.argsort(-(rows @ (query / np.linalg.norm(query))))[:4]
    assert [h.passage.id for h in hits] == [f"doc{i}#{i}" for i in expected]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score == pytest.approx(float(rows[3] @ query / np.linalg.norm(query)), abs=1e-4)


def test_the_async_search_is_the_search_and_the_store_declares_its_capabilities(filled):
    import asyncio

    query = vectors(len(METADATA))[2]
    waited = asyncio.run(filled.asearch(query, 3, parse_where("authority > 1", DEFAULT_AUTHORITY_TIERS)))
    assert waited == filled.search(query, 3, parse_where("authority > 1", DEFAULT_AUTHORITY_TIERS))
    assert "dense search" in type(filled).capabilities.offered()


def test_upsert_of_a_known_id_replaces_it(filled):
    fresh = Passage(id="doc2#2", title="New", text="rewritten", metadata={"source": "new.org"})
    vector = vectors(1, seed=99)
    filled.upsert([fresh], vector)
    assert filled.count() == len(METADATA)
    top = filled.search(vector[0], 1)[0]
    assert (top.passage.id, top.passage.text, top.passage.title) == ("doc2#2", "rewritten", "New")
    assert top.passage.metadata == {"source": "new.org"}
    assert top.score == pytest.approx(1.0, abs=1e-4)


def test_delete_removes_and_ignores_unknown_ids(filled):
    filled.delete(["doc1#1", "doc4#4", "no such id"])
    assert filled.count() == len(METADATA) - 2
    found = {h.passage.id for h in filled.search(vectors(len(METADATA))[1], len(METADATA))}
    assert found == {p.id for p in corpus()} - {"doc1#1", "doc4#4"}


def test_metadata_round_trips(open_store):
    metadata = {"date": "2024-03", "source": "Example.org", "authority": "official", "page": 3, "file": "a/b.pdf",
                "meta": {"lang": "fr", "tags": ["x", "y"], "nested": {"k": [1, 2.5, None]}}, "note": "é ü ✓"}
    passage = Passage(id="only", title="T", text="the text\nwith two lines", metadata=metadata)
    store = open_store()
    store.upsert([passage], vectors(1))
    [hit] = store.search(vectors(1)[0], 3)
    assert hit.passage == passage
    assert json.dumps(hit.passage.metadata, sort_keys=True) == json.dumps(metadata, sort_keys=True)


@pytest.mark.parametrize("text", WHERES)
def test_where_passes_exactly_what_where_matches_passes(filled, backend, text):
    where = parse_where(text, DEFAULT_AUTHORITY_TIERS)
    assert where is not None
    refused = filled.unsupported(where)
    if refused is not None:
        assert text in MAY_REFUSE | backend.refuses, f"refused {text!r}: {refused}"
        assert "\n" not in refused
        with pytest.raises(StoreError, match="."):
            filled.search(vectors(1)[0], 5, where)
        return
    expected = {p.id for p in corpus() if where.matches(p.metadata)}
    found = filled.search(vectors(1)[0], len(METADATA), where)
    assert {h.passage.id for h in found} == expected
    assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)


def test_a_filtered_search_returns_the_k_closest_that_pass(filled):
    where = parse_where("source = example.org", DEFAULT_AUTHORITY_TIERS)
    assert where is not None
    rows = vectors(len(METADATA))
    passing = [i for i, m in enumerate(METADATA) if where.matches(m)]
    query = rows[passing[-1]]
    hits = filled.search(query, 2, where)
    ranked = sorted(passing, key=lambda i: -float(rows[i] @ query))[:2]
    assert [h.passage.id for h in hits] == [f"doc{i}#{i}" for i in ranked]


def test_a_missing_collection_is_one_line_on_search(open_store):
    store = open_store("missing")
    with pytest.raises(StoreError) as raised:
        store.search(vectors(1)[0], 3)
    assert "\n" not in str(raised.value)


FOREIGN_FIELDS = FieldMapping(id="doc", text="body", title="headline", date="published", source="site",
                              authority=None)


def _foreign_points() -> list[ForeignPoint]:
    rows = vectors(3, seed=3)
    return [ForeignPoint(key=i + 1, vector=rows[i], payload={
        "doc": f"ext-{i}", "body": f"foreign text {i}", "headline": f"Head {i}", "published": f"2024-0{i + 1}-02",
        "site": "Ext.org", "lang": "de", "authority": "ignored"}) for i in range(3)]


def test_a_foreign_collection_is_read_through_the_field_mapping(backend, open_store, tmp_path):
    if backend.foreign is None:
        pytest.skip("this backend has no collections written by other tools")
    backend.foreign(tmp_path, "theirs", _foreign_points())
    store = open_store("theirs", FOREIGN_FIELDS)
    assert (store.count(), store.dimension()) == (3, DIMENSION)
    top = store.search(vectors(3, seed=3)[1], 2)[0]
    assert (top.passage.id, top.passage.title, top.passage.text) == ("ext-1", "Head 1", "foreign text 1")
    assert top.passage.metadata == {"date": "2024-02-02", "source": "Ext.org", "lang": "de", "authority": "ignored"}
    where = parse_where("date >= 2024-02", DEFAULT_AUTHORITY_TIERS)
    assert where is not None
    refused = store.unsupported(where)
    if refused is not None:
        with pytest.raises(StoreError, match="date >= 2024-02"):
            store.search(vectors(1)[0], 2, where)


def test_a_payload_without_the_mapped_text_field_is_one_line(backend, open_store, tmp_path):
    if backend.foreign is None:
        pytest.skip("this backend has no collections written by other tools")
    backend.foreign(tmp_path, "theirs", _foreign_points())
    store = open_store("theirs", FOREIGN_FIELDS.model_copy(update={"text": "content"}))
    with pytest.raises(StoreError, match="content") as raised:
        store.search(vectors(1)[0], 2)
    assert "\n" not in str(raised.value)


def test_nothing_is_written_into_a_collection_another_tool_wrote(backend, open_store, tmp_path):
    """With store.fields at its defaults (a mistyped --collection is enough): refused in one line, the collection
    left as it was (issue 68)."""
    if backend.foreign is None:
        pytest.skip("this backend has no collections written by other tools")
    backend.foreign(tmp_path, "theirs", _foreign_points())
    store = open_store("theirs")
    with pytest.raises(StoreError, match="tanglerag did not write|was written by another tool") as raised:
        store.upsert(corpus()[:1], vectors(1))
    assert "\n" not in str(raised.value)
    store.close()  # Qdrant's local mode opens a folder from one client at a time
    theirs = open_store("theirs", FOREIGN_FIELDS)
    assert theirs.count() == 3 and theirs.search(vectors(3, seed=3)[0], 1)[0].passage.id == "ext-0"
