import pytest
from pydantic import ValidationError

from tanglerag.types import Passage, Question, StageUsage, Usage


def test_blank_question_and_passage_are_rejected():
    with pytest.raises(ValidationError, match="question is empty"):
        Question(text="   ")
    with pytest.raises(ValidationError, match="passage text is empty"):
        Passage(id="x", text="")


def test_usage_total_sums_stages():
    usage = Usage(stages={"retrieve": StageUsage(seconds=0.5),
                          "generate": StageUsage(llm_calls=2, cached_calls=1, prompt_tokens=100,
                                                 completion_tokens=7, model_seconds=3.0, seconds=1.25)})
    assert usage.totals() == {"llm_calls": 2, "cached_calls": 1, "prompt_tokens": 100,
                               "completion_tokens": 7, "model_seconds": 3.0, "seconds": 1.75}
    assert usage.total.total_calls == 3
