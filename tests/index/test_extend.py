"""Streamed `--add`: the same index as an in-memory add, conflicts refused before any embedding, replacements
that drop the old text, and an interrupted add that leaves the stored index as it was."""

import pytest

from tanglerag.config import IndexConfig
from tanglerag.index.documents import DocumentConflict
from tanglerag.index.extend import add_streaming, document_batches
from tanglerag.index.passage_index import PassageIndex, read_manifest
from tanglerag.index.streaming import build_streaming
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

QUERIES = ["river 4 and the mill", "bridge 9", "a passage about river 1", "edited text about lakes"]


def _doc(doc: str, texts: list[str]) -> list[Passage]:
    """A document as the chunker stores it: one passage under its id, or chunks ``ID#n``."""
    if len(texts) == 1:
        return [Passage(id=doc, title=doc, text=texts[0])]
    return [Passage(id=f"{doc}#{i}", title=doc, text=t, metadata={"source_id": doc, "chunk": i})
            for i, t in enumerate(texts)]


def _corpus(start: int, stop: int) -> list[Passage]:
    return [p for i in range(start, stop)
            for p in _doc(f"d{i}", [f"passage {i} about river {i % 13}"] + [f"bridge {i % 9} part {i}"] * (i % 3))]


class CountingEmbedder(HashEmbedder):
    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.texts, self.fail_after = 0, fail_after

    def embed(self, texts, *, show_progress=False):
        if self.fail_after is not None and self.texts >= self.fail_after:
            raise KeyboardInterrupt  # what a user's Ctrl-C does half-way
        self.texts += len(texts)
        return super().embed(texts)


def _same(streamed: PassageIndex, in_memory: PassageIndex, *, same_structure: bool = True) -> None:
    """Same passages and vectors; the same hits too where the two indexes were built alike (an HNSW graph's shape
    depends on the order of its add calls, and IVF lists on the vectors they were trained on)."""
    ids = [p.id for p in in_memory.passages]
    assert list(streamed.passages) == list(in_memory.passages)
    assert streamed.vectors(ids).tolist() == in_memory.vectors(ids).tolist()
    if streamed.config.index_type == "hnsw" or not same_structure:
        return
    for query in QUERIES:
        for mode in ("dense", "bm25"):
            assert [h.passage.id for h in streamed.search(query, 5, mode)] == \
                [h.passage.id for h in in_memory.search(query, 5, mode)]


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_a_streamed_add_gives_the_in_memory_add(tmp_path, index_type):
    config, old, incoming = IndexConfig(index_type=index_type, bm25=True), _corpus(0, 300), _corpus(250, 500)
    build_streaming(tmp_path / "idx", iter(old), HashEmbedder(), config)
    embedder, seen = CountingEmbedder(), []
    streamed, changes = add_streaming(tmp_path / "idx", lambda: iter(incoming), embedder, config, batch_size=64,
                                      progress=seen.append)
    in_memory = PassageIndex.build(old, HashEmbedder(), config)
    expected = in_memory.add(incoming)
    assert (changes.added, changes.unchanged) == (expected.added, expected.unchanged) and changes.unchanged > 0
    assert embedder.texts == changes.added and sum(seen) == len(incoming)  # identical documents are not embedded
    _same(streamed, in_memory)


def test_changed_documents_are_all_named_and_nothing_is_embedded(tmp_path):
    config, old = IndexConfig(), _corpus(0, 200)
    build_streaming(tmp_path / "idx", iter(old), HashEmbedder(), config)
    incoming = _corpus(200, 260) + _doc("d5", ["edited text about lakes"]) + _doc("d150", ["x", "y", "z"])
    embedder = CountingEmbedder()
    with pytest.raises(DocumentConflict, match="'d150', 'd5'"):
        add_streaming(tmp_path / "idx", lambda: iter(incoming), embedder, config, batch_size=16)
    assert embedder.texts == 0 and list(PassageIndex.load(tmp_path / "idx", HashEmbedder()).passages) == old


@pytest.mark.parametrize("index_type", ["flat", "ivf"])  # ivf: retrained on the vectors kept
def test_replacing_documents_drops_their_old_chunks_as_in_memory(tmp_path, index_type):
    config, old = IndexConfig(index_type=index_type, bm25=True), _corpus(0, 200)
    build_streaming(tmp_path / "idx", iter(old), HashEmbedder(), config)
    incoming = (_doc("d5", ["edited text about lakes"]) + _corpus(100, 120)
                + _doc("d151", ["edited", "text", "about", "lakes"]) + _corpus(200, 230))
    streamed, changes = add_streaming(tmp_path / "idx", lambda: iter(incoming), HashEmbedder(), config,
                                      replace=True, batch_size=16)
    in_memory = PassageIndex.build(old, HashEmbedder(), config)
    expected = in_memory.add(incoming, replace=True)
    assert changes.replaced == ["d151", "d5"] == expected.replaced
    assert changes.removed == expected.removed == 5  # d5's 3 chunks and d151's 2
    _same(streamed, in_memory, same_structure=index_type == "flat")  # IVF is retrained: on kept vs kept + new


def test_an_add_stopped_half_way_leaves_the_stored_index(tmp_path):
    folder, old = tmp_path / "idx", _corpus(0, 100)
    build_streaming(folder, iter(old), HashEmbedder(), IndexConfig())
    with pytest.raises(KeyboardInterrupt):
        add_streaming(folder, lambda: iter(_corpus(100, 400)), CountingEmbedder(fail_after=100), IndexConfig(),
                      batch_size=50)
    assert list(PassageIndex.load(folder, HashEmbedder()).passages) == old
    assert [p.name for p in folder.iterdir() if p.name.startswith("data-")] == [read_manifest(folder).data]


def test_batches_never_split_a_documents_chunks():
    passages = _doc("a", ["1", "2", "3"]) + _doc("b", ["4"]) + _doc("c", ["5", "6"])
    assert [[p.id for p in b] for b in document_batches(passages, 2)] == [["a#0", "a#1", "a#2"], ["b", "c#0", "c#1"]]
