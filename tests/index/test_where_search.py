"""Filtered search (``--where``): the top k among the passages a where lets through, in every index type and mode,
from a list of passages and from the SQLite store, with CDIT's separations still applied; the filter never becomes
SQL."""

import sqlite3

import pytest

from tanglerag.config import IndexConfig, RetrievalConfig
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.trim import TrimState
from tanglerag.stages.retrieve import IndexRetriever
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage, Question
from tanglerag.where import parse_where

QUERY = "lighthouse keeper on the northern cape"


def _corpus() -> list[Passage]:
    """300 passages about the same few things; one in ten dated 2024, two from rare.org, the rest undated."""
    return [Passage(id=f"p{i}", text=f"record{i} lighthouse keeper {i % 7} on the northern cape, harbour {i % 11}",
                    metadata={**({"date": f"2024-0{1 + i % 9}-01"} if i % 10 == 3 else {}),
                              "source": "rare.org" if i in (17, 251) else "common.org",
                              "authority": "official" if i % 2 else 1})
            for i in range(300)]


def _ids(hits) -> list[str]:
    return [h.passage.id for h in hits]


def _expected(index: PassageIndex, where: str, k: int, mode: str) -> list[float]:
    """The scores of the whole index ranked, then filtered: what a filtered search must return (for exact rankings;
    scores, since passages that tie may come in either order)."""
    matches = parse_where(where)
    assert matches is not None
    return [round(h.score, 6) for h in index.search(QUERY, len(index.passages), mode)
            if matches.matches(h.passage.metadata)][:k]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One saved index of each type (with BM25), loaded back: passages read from the SQLite store."""
    embedder, folders = HashEmbedder(), {}
    for index_type in ("flat", "hnsw", "ivf"):
        folder = tmp_path_factory.mktemp(index_type) / "idx"
        PassageIndex.build(_corpus(), embedder, IndexConfig(index_type=index_type, bm25=True, ivf_nprobe=64)
                           ).save(folder)
        folders[index_type] = folder
    return {kind: PassageIndex.load(folder, embedder) for kind, folder in folders.items()}


@pytest.mark.parametrize("where", ["date >= 2024-01-01", "source = rare.org", "date >= 2024-05 and authority >= 3"])
@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_flat_returns_the_filtered_top_k_of_the_full_ranking(saved, where, mode):
    index = saved["flat"]
    filtered = parse_where(where)
    hits = index.search(QUERY, 5, mode, where=filtered)
    assert [round(h.score, 6) for h in hits] == _expected(index, where, 5, mode)
    assert len(hits) == (2 if "rare" in where else 5) and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(filtered.matches(h.passage.metadata) for h in hits)


@pytest.mark.parametrize("index_type", ["hnsw", "ivf"])
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_approximate_types_return_only_matches_and_find_rare_ones(saved, index_type, mode):
    index = saved[index_type]
    dated = index.search(QUERY, 5, mode, where=parse_where("date >= 2024-01-01"))
    assert len(dated) == 5 and all(h.passage.metadata.get("date", "").startswith("2024") for h in dated)
    assert sorted(_ids(index.search(QUERY, 5, mode, where=parse_where("source = rare.org")))) == ["p17", "p251"]


def test_a_filter_nothing_passes_returns_nothing(saved):
    assert saved["flat"].search(QUERY, 5, where=parse_where("source = nowhere.org")) == []


def test_passages_held_in_a_list_filter_the_same(saved):
    built = PassageIndex.build(_corpus(), HashEmbedder(), IndexConfig(bm25=True))
    where = parse_where("date < 2024-04 and source != rare.org")
    assert _ids(built.search(QUERY, 4, "hybrid", where=where)) == _ids(saved["flat"].search(QUERY, 4, "hybrid",
                                                                                           where=where))


def test_separations_still_apply_among_the_matches(saved):
    index = PassageIndex.build(_corpus(), HashEmbedder(), IndexConfig())
    where = parse_where("date >= 2024")
    first, second = _ids(index.search(QUERY, 2, where=where))
    index.apply_trim(TrimState(separated={(first, second)}))
    hits = _ids(index.search(QUERY, 3, where=where))
    assert first in hits and second not in hits and len(hits) == 3


def test_text_that_looks_like_sql_is_only_ever_a_value(saved, tmp_path):
    index = saved["flat"]
    store = index.passages.path  # the store is opened read-only; the where never reaches it as SQL
    before = sqlite3.connect(store).execute("SELECT count(*) FROM passages").fetchone()
    with pytest.raises(InputError, match=r"cannot read '; DROP TABLE passage"):
        parse_where("source = x; DROP TABLE passages")
    quoted = parse_where("source = 'x OR 1=1; DROP TABLE passages; --'")
    assert index.search(QUERY, 5, where=quoted) == []
    assert sqlite3.connect(store).execute("SELECT count(*) FROM passages").fetchone() == before == (300,)


def test_the_retriever_filters_by_the_setting_and_maps_tiers(saved):
    config = RetrievalConfig(top_k=3, where="authority >= official")
    hits = IndexRetriever(saved["flat"], config).retrieve(Question(text=QUERY)).passages
    assert len(hits) == 3 and all(h.passage.metadata["authority"] == "official" for h in hits)
    assert IndexRetriever(saved["flat"], config, tiers={"official": 0.5}).retrieve(Question(text=QUERY)).passages
    with pytest.raises(InputError, match="authority value 'gov' cannot be read"):
        IndexRetriever(saved["flat"], RetrievalConfig(where="authority = gov"))
