"""CDIT's trim log applied by the index itself: separation at search time for every index type, HNSW cuts that
survive save/load and `--add`, and undo that brings everything back."""

import faiss
import pytest

from tanglerag.config import IndexConfig
from tanglerag.index.hnsw_edit import linked
from tanglerag.index.passage_index import PassageIndex, read_manifest, store_passages
from tanglerag.index.trim import TrimLog
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage
from tests.index.legacy import as_format_2

DOCS = [Passage(id=f"d{i}", text=f"The lamp in room {i} is switched {'on' if i % 2 else 'off'} at night.")
        for i in range(30)]


def _two_top(index: PassageIndex, query: str) -> tuple[str, str]:
    first, second = index.search(query, 2)
    return first.passage.id, second.passage.id


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_separated_passages_never_come_back_together(tmp_path, kind):
    embedder = HashEmbedder()
    folder = tmp_path / "idx"
    store_passages(folder, DOCS * 1, embedder, IndexConfig(index_type=kind, ivf_nlist=1))
    query = "Is the lamp in room 3 switched on?"
    a, b = _two_top(PassageIndex.load(folder, embedder), query)
    TrimLog(folder).add_witnesses(query, [a], [b], judge="test", k=1)
    index = PassageIndex.load(folder, embedder)
    ids = [h.passage.id for h in index.search(query, 5)]
    assert a in ids and b not in ids and len(ids) == 5
    hits, dropped = index.search_trimmed(query, 5)
    assert dropped == [(b, a)]
    untrimmed = [h.passage.id for h in index.search_untrimmed(query, 5)]
    assert untrimmed[:2] == [a, b]  # without the table both still come back: a cut link only steers the search


def test_hnsw_cuts_are_reapplied_on_load_saved_pristine_and_undone(tmp_path):
    embedder = HashEmbedder()
    folder = tmp_path / "idx"
    store_passages(folder, DOCS, embedder, IndexConfig(index_type="hnsw"))
    index = PassageIndex.load(folder, embedder)
    pos = {p.id: i for i, p in enumerate(index.passages)}
    assert linked(index.dense, pos["d1"], pos["d2"])
    TrimLog(folder).add_witnesses("q", ["d1"], ["d2"], judge="test", k=1)
    index = PassageIndex.load(folder, embedder)
    assert not linked(index.dense, pos["d1"], pos["d2"]) and index.trim.is_separated("d1", "d2")
    store_passages(folder, [Passage(id="new", text="A new lamp.")], embedder, IndexConfig(index_type="hnsw"))
    on_disk = faiss.read_index(str(folder / read_manifest(folder).data / "dense.faiss"))
    assert linked(on_disk, pos["d1"], pos["d2"])  # saved without the cut: the log is the truth
    index = PassageIndex.load(folder, embedder)
    assert len(index.passages) == 31 and not linked(index.dense, pos["d1"], pos["d2"])  # re-applied after --add
    assert TrimLog(folder).undo(0) == 2
    index = PassageIndex.load(folder, embedder)
    assert linked(index.dense, pos["d1"], pos["d2"]) and not index.trim.separated


def test_the_retriever_says_in_the_trace_what_the_separation_table_dropped(tmp_path):
    from tanglerag.config import RetrievalConfig
    from tanglerag.stages.retrieve import IndexRetriever, SeparationStep
    from tanglerag.tracking import track
    from tanglerag.types import Question

    embedder = HashEmbedder()
    folder = tmp_path / "idx"
    store_passages(folder, DOCS, embedder, IndexConfig())
    query = "Is the lamp in room 3 switched on?"
    a, b = _two_top(PassageIndex.load(folder, embedder), query)
    TrimLog(folder).add_witnesses(query, [a], [b], judge="test", k=1)
    with track() as tracker:
        IndexRetriever(PassageIndex.load(folder, embedder), RetrievalConfig(top_k=3)).retrieve(Question(text=query))
    step = tracker.trace().find(SeparationStep)
    assert [(d.passage_id, d.separated_from) for d in step.dropped] == [(b, a)]


def test_version_1_indexes_still_load_and_unknown_versions_are_refused(tmp_path):
    import json

    from tanglerag.errors import IndexStoreError
    from tanglerag.index.manifest import FORMAT_VERSION

    embedder = HashEmbedder()
    folder = tmp_path / "idx"
    store_passages(folder, DOCS[:5], embedder, IndexConfig())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION == 3
    as_format_2(folder)  # passages in JSON lines, as every index before the SQLite store
    for version in (1, 2):  # version 1: written before CDIT, no trim log; both load as they are
        (folder / "manifest.json").write_text(json.dumps({**manifest, "format_version": version}))
        assert [p.id for p in PassageIndex.load(folder, embedder).passages] == [p.id for p in DOCS[:5]]
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format_version": 4}))
    with pytest.raises(IndexStoreError, match="format version 4; this tanglerag reads 1, 2, 3"):
        PassageIndex.load(folder, embedder)
