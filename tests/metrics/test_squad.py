import pytest

from tanglerag.metrics.squad import best_over, exact_match, normalize_answer, token_f1


def test_normalization_strips_case_punctuation_articles_spaces():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("3,559 people") == "3559 people"


def test_em_and_f1():
    assert exact_match("the Carpenters", "Carpenters") == 1.0
    assert token_f1("3,559", "3,559 people") == pytest.approx(2 / 3)
    assert token_f1("Golf", "American football") == 0.0
    assert best_over(token_f1, "Mahesh Bhatt", ["Raj Kapoor", "Mahesh Bhatt"]) == 1.0
