import pytest

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.metrics.registry import compute
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
