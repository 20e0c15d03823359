import math

import pytest

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.metrics.registry import compute, derive
from tanglerag.types import Answer, Passage, RetrievedPassage

READINGS = [{"entity": "", "descriptor": "", "answer": "Daei", "aliases": ["Ali Daei"], "sub_question": "men?"},
            {"entity": "", "descriptor": "", "answer": "Christine Sinclair", "sub_question": "women?"},
            {"entity": "", "descriptor": "", "answer": "Bican", "sub_question": "all time?"}]
EX = QAExample(id="q", question="Who has the most goals?", answers=["Daei"],
               metadata={"disambig": READINGS, "long_answers": ["Ali Daei leads the men and Sinclair the women.",
                                                                "Bican scored the most goals of all time."]})


def _answer(text: str, passages: list[str] = (), unknown: bool = False) -> Answer:
    hits = [RetrievedPassage(passage=Passage(id=f"p{i}", text=t), score=1.0, rank=i + 1)
            for i, t in enumerate(passages)]
    return Answer(question=EX.question, method="m", text=text, passages=hits, is_unknown=unknown)


def test_rouge_l_takes_the_best_gold_long_answer_and_unknown_scores_zero():
    exact = compute(["rouge_l"], _answer("Bican scored the most goals of all time. [1]"), EX)["rouge_l"]
    assert exact == pytest.approx(1.0)  # citation marks are not part of the text scored
    partial = compute(["rouge_l"], _answer("Ali Daei leads the men."), EX)["rouge_l"]
    assert 0.3 < partial < 1.0
    assert compute(["rouge_l"], _answer("unknown", unknown=True), EX)["rouge_l"] == 0.0
    assert compute(["rouge_l"], _answer("x"), QAExample(id="n", question="q", answers=["a"]))["rouge_l"] is None


def test_dr_is_derived_from_the_run_means():
    assert derive(["rouge_l", "d_f1", "dr"], {"rouge_l": 0.36, "d_f1": 0.25}) == {"dr": pytest.approx(math.sqrt(0.09))}
    assert derive(["dr"], {"rouge_l": None, "d_f1": 0.2}) == {"dr": None}
    assert "dr" not in compute(["rouge_l", "dr"], _answer("Bican"), EX)  # not a per-question score


def test_mrecall_at_k_needs_all_readings_or_k_of_them():
    passages = ["Ali Daei scored 109.", "Christine Sinclair scored 187.", "Unrelated text.", "Josef Bican, 805."]
    scores = compute(["mrecall@5", "mrecall@2", "mrecall@3"], _answer("x", passages), EX)
    assert scores["mrecall@5"] == 1.0  # all three readings answered within the top 5 (an alias counts)
    assert scores["mrecall@2"] == 1.0  # more readings than k: k of them suffice
    assert scores["mrecall@3"] == 0.0  # the third passage answers nothing, Bican is fourth
    assert compute(["mrecall@5"], _answer("x"), EX)["mrecall@5"] is None  # closed-book: nothing retrieved
    with pytest.raises(InputError, match="unknown metric"):
        compute(["mrecall@0"], _answer("x"), EX)
