import pytest

from tanglerag.answer_parsing import cited_numbers, first_answer_line, is_unknown, strip_citations


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
