import pytest

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.metrics.registry import compute, rank_scores
from tanglerag.types import Answer

EX = QAExample(id="q", question="Who?", answers=["Mahesh Bhatt"])


def test_citation_markers_do_not_hurt_scores():
    answer = Answer(question="Who?", method="concat", text="Mahesh Bhatt [2]", citations=["d2"])
    assert compute(["em", "f1", "unk", "cited"], answer, EX) == {"em": 1.0, "f1": 1.0, "unk": 0.0, "cited": 1.0}


def test_unknown_scores_zero_and_counts_as_unk():
    answer = Answer(question="Who?", method="concat", text="unknown", is_unknown=True)
    assert compute(["em", "f1", "unk", "cited"], answer, EX) == {"em": 0.0, "f1": 0.0, "unk": 1.0, "cited": 0.0}


def test_unknown_metric_name():
    with pytest.raises(InputError, match="unknown metric"):
        compute(["bleu"], Answer(question="q", method="m", text="x"), EX)


def test_ranking_metrics_follow_the_methods_order_and_count_every_judged_query():
    judged = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d9": 1}}
    # b's tie is ranked as the method listed it (trec_eval alone would put d3 first, by id); c retrieved nothing
    ranking = {"a": {"d0": 0.9, "d1": 0.5}, "b": {"d2": 0.3, "d3": 0.3}, "c": {}}
    scores = rank_scores(["recall@1", "recall@5", "map@5", "mrr"], judged, ranking)
    assert scores == pytest.approx({"recall@1": 1 / 3, "recall@5": 2 / 3, "map@5": 0.5, "mrr": 0.5})
    with pytest.raises(InputError, match="unknown ranking metric 'hits@3'"):
        rank_scores(["hits@3"], judged, ranking)
