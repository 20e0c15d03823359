"""Issue 69: the relevance floor. A dense search leaves out the passages under ``retrieval.min_score`` (a clearly
unrelated one would only fill the top-k) and says which in the trace; other modes and evaluations keep the top-k."""

from tanglerag.config import IndexConfig, RetrievalConfig
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import CALIBRATED_FLOORS, FloorStep, IndexRetriever, floor_for
from tanglerag.testing import HashEmbedder
from tanglerag.tracking import track
from tanglerag.types import Passage, Question

CORPUS = [Passage(id="leave", text="Parental leave lasts sixteen weeks at full pay."),
          Passage(id="licence", text="Permission is hereby granted free of charge to any person obtaining a copy.")]


def _index(tmp_path) -> PassageIndex:
    store_passages(tmp_path / "idx", CORPUS, HashEmbedder(), IndexConfig(bm25=True))
    return PassageIndex.load(tmp_path / "idx", HashEmbedder())


def test_a_passage_under_the_floor_is_left_out_and_said_so(tmp_path):
    index = _index(tmp_path)
    question = Question(text="Parental leave lasts sixteen weeks at full pay.")
    everything = IndexRetriever(index, RetrievalConfig(top_k=2, min_score=None)).retrieve(question).passages
    low = min(h.score for h in everything)
    floor = (low + max(h.score for h in everything)) / 2
    with track() as tracker:
        kept = IndexRetriever(index, RetrievalConfig(top_k=2, min_score=floor)).retrieve(question).passages
    assert [h.passage.id for h in kept] == ["leave"]
    (step,) = [s for s in tracker.steps if isinstance(s, FloorStep)]
    assert step.dropped == [("licence", low)] and step.headline().startswith(f"under the relevance floor {floor:g}")


def test_auto_is_the_floor_measured_for_the_embedder_and_none_for_one_not_measured():
    class Measured(HashEmbedder):
        identity = "all-MiniLM-L6-v2-onnx-int8"

    assert floor_for(RetrievalConfig(), Measured()) == CALIBRATED_FLOORS["all-MiniLM-L6-v2-onnx-int8"]
    assert floor_for(RetrievalConfig(), HashEmbedder()) is None
    assert floor_for(RetrievalConfig(min_score=0.4), HashEmbedder()) == 0.4
    assert floor_for(RetrievalConfig(min_score=0.4, mode="bm25"), Measured()) is None


def test_the_floor_is_for_dense_scores_only_and_evaluations_keep_the_top_k(tmp_path):
    index = _index(tmp_path)
    question = Question(text="How long does parental leave last?")
    bm25 = IndexRetriever(index, RetrievalConfig(top_k=2, mode="hybrid", min_score=0.99)).retrieve(question)
    assert len(bm25.passages) == 2  # fused ranks are no cosine: no floor fits them
    assert Settings.load().retrieval.min_score == "auto"
    assert Settings.load().evaluating().retrieval.min_score is None  # the papers' top-k
    assert Settings.load(overrides=["retrieval.min_score=0.3"]).evaluating().retrieval.min_score == 0.3
