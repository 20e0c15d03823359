"""Index types for corpora beyond RAM: IVF-PQ codes, and flat / IVF / IVF-PQ vectors memory-mapped when searching."""

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex, read_manifest, store_passages
from tanglerag.index.trim import TrimState
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

EMBEDDER = HashEmbedder("hash-64", 64)
PQ = IndexConfig(index_type="ivfpq", pq_nbits=4, ivf_nprobe=16)  # 16 codes per sub-quantizer: 624 passages train it
QUERIES = ["river 3 flows past mill 12", "mill 40 stands by river 7", "the bridge over river 1"]


def _corpus(n: int) -> list[Passage]:
    return [Passage(id=f"p{i}", text=f"mill {i} stands by river {i % 50} and bridge {i % 7}") for i in range(n)]


def _ids(index: PassageIndex, query: str, k: int = 10) -> list[str]:
    return [hit.passage.id for hit in index.search(query, k)]


def test_ivfpq_round_trips_and_finds_what_exact_search_finds(tmp_path):
    corpus = _corpus(800)
    built = PassageIndex.build(corpus, EMBEDDER, PQ)
    built.save(tmp_path / "pq")
    loaded = PassageIndex.load(tmp_path / "pq", EMBEDDER)
    assert read_manifest(tmp_path / "pq").index_type == "ivfpq" and len(loaded.passages) == 800
    for query in QUERIES:
        assert _ids(loaded, query) == _ids(built, query)
    # a passage's own text finds it among the first three, though each vector is kept as 8 bytes of codes
    found = [corpus[i].id in _ids(loaded, corpus[i].text, 3) for i in range(0, 800, 40)]
    assert sum(found) >= 0.9 * len(found), found


def test_ivfpq_refuses_a_corpus_too_small_to_train_its_codes():
    with pytest.raises(InputError, match="needs at least 624 passages to train its codes, the corpus has 100"):
        PassageIndex.build(_corpus(100), EMBEDDER, PQ)
    with pytest.raises(InputError, match="pq_m=5 does not divide the embedding dimension 64"):
        PassageIndex.build(_corpus(700), EMBEDDER, PQ.model_copy(update={"pq_m": 5}))


@pytest.mark.parametrize("config", [IndexConfig(), IndexConfig(index_type="ivf"), PQ, PQ.model_copy(update={"pq_refine": 0})],
                         ids=["flat", "ivf", "ivfpq", "ivfpq-codes-only"])
def test_a_memory_mapped_index_searches_like_one_in_ram(tmp_path, config):
    store_passages(tmp_path / "idx", _corpus(700), EMBEDDER, config)
    in_ram = PassageIndex.load(tmp_path / "idx", EMBEDDER)
    mapped = PassageIndex.load(tmp_path / "idx", EMBEDDER, mmap=True)
    assert [_ids(mapped, q) for q in QUERIES] == [_ids(in_ram, q) for q in QUERIES]
    # a writer loads the index whole, so adding to the mapped folder still works and the mapped copy is untouched
    store_passages(tmp_path / "idx", [Passage(id="new", text="a new mill by river 3")], EMBEDDER, config)
    assert len(PassageIndex.load(tmp_path / "idx", EMBEDDER, mmap=True).passages) == 701
    assert len(mapped.passages) == 700


def test_cdit_separation_holds_on_ivfpq():
    index = PassageIndex.build(_corpus(700), EMBEDDER, PQ)
    first, second = _ids(index, QUERIES[0], 2)
    index.apply_trim(TrimState(separated={tuple(sorted((first, second)))}))
    hits = _ids(index, QUERIES[0])
    assert first in hits and second not in hits and len(hits) == 10 and index.cut_link_count == 0


def test_ivfpq_keeps_exact_vectors_for_its_re_ranking_unless_told_not_to(tmp_path):
    corpus = _corpus(700)
    for name, config in (("refined", PQ), ("codes", PQ.model_copy(update={"pq_refine": 0}))):
        store_passages(tmp_path / name, corpus, EMBEDDER, config)
    size = {name: sum(p.stat().st_size for p in (tmp_path / name).rglob("dense.faiss")) for name in ("refined", "codes")}
    assert size["codes"] * 3 < size["refined"]  # 8 bytes of codes a passage against 256 bytes of float32 besides
    refined = PassageIndex.load(tmp_path / "refined", EMBEDDER, mmap=True)
    assert refined.dense.k_factor == PQ.pq_refine and refined.vectors(["p3"]).tolist() == [EMBEDDER.embed([corpus[3].text])[0].tolist()]
