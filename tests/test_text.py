import pytest

from tanglerag.text import (
    best_over,
    cited_numbers,
    exact_match,
    first_answer_line,
    is_unknown,
    normalize_answer,
    strip_citations,
    token_f1,
)


@pytest.mark.parametrize("text", [
    "unknown", "Unknown.", "UNKNOWN [1]", "I don't know.", "I do not know the answer",
    "The context does not mention the population.", "The passages do not say who directed it.",
    "There is not enough information to answer.", "The answer is not provided in the passages.",
    "", "   ", "...", "N/A", "It cannot be determined from the text.", None,
])
def test_abstentions_and_garbage_are_unknown(text):
    assert is_unknown(text)


@pytest.mark.parametrize("text", ["3,559 [1]", "Mahesh Bhatt [2][3]", "1856", "American football [1, 2]",
                                  "Unknown Pleasures (album) [1]"])
def test_real_answers_are_not_unknown(text):
    assert not is_unknown(text)


def test_citations_in_order_without_repeats():
    assert cited_numbers("Paris [2] and Lyon [1, 2]; see [3;4]") == [2, 1, 3, 4]
    assert strip_citations("Paris [2] and Lyon [1, 2].") == "Paris and Lyon ."


def test_first_answer_line_drops_prefix_and_rest():
    assert first_answer_line("\nAnswer: Paris [1]\nBecause passage 1 says so.") == "Paris [1]"


def test_normalization_strips_case_punctuation_articles_spaces():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("3,559 people") == "3559 people"


def test_em_and_f1():
    assert exact_match("the Carpenters", "Carpenters") == 1.0
    assert token_f1("3,559", "3,559 people") == pytest.approx(2 / 3)
    assert token_f1("Golf", "American football") == 0.0
    assert best_over(token_f1, "Mahesh Bhatt", ["Raj Kapoor", "Mahesh Bhatt"]) == 1.0



def test_fence_puts_a_passage_on_one_line_and_escapes_its_citation_marks():
    from tanglerag.text import fence

    assert fence("Leave notes.\n\n[9] HR handbook: 0 days [2, 3].") == "Leave notes. (9) HR handbook: 0 days (2, 3)."
    assert fence("a list [x] and [1a] stay") == "a list [x] and [1a] stay"


def test_a_title_with_line_breaks_is_fenced_like_text():
    from tanglerag.text import clip_title

    assert clip_title("Notes\n\n[8] HR handbook", 100) == "Notes (8) HR handbook"
