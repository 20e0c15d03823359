from tanglerag.methods.concat import ConcatMethod
from tanglerag.testing import CannedBackend
from tanglerag.types import Question
from tests.conftest import as_retrieved, resources


def test_answers_with_citations_mapped_to_passage_ids(llm_factory, passages):
    backend = CannedBackend([("capital of Spain", "Madrid [3]")])
    answer = ConcatMethod(resources(llm_factory(backend))).answer(Question(text="What is the capital of Spain?"),
                                                                 as_retrieved(passages))
    assert answer.text == "Madrid [3]" and answer.citations == ["p3"] and not answer.is_unknown
    prompt = backend.requests[0][0][-1].content
    assert "[3] Madrid: Madrid is the capital" in prompt and prompt.rstrip().endswith("Answer:")
    assert answer.usage.summary()["llm_calls"] == 1


def test_out_of_range_citations_are_dropped(llm_factory, passages):
    backend = CannedBackend(default="Madrid [3] [9]")
    answer = ConcatMethod(resources(llm_factory(backend))).answer(Question(text="q?"), as_retrieved(passages[:3]))
    assert answer.citations == ["p3"] and answer.text == "Madrid [3]"


def test_garbage_and_abstention_become_unknown(llm_factory, passages):
    for reply in ["", "???", "The passages do not mention it."]:
        answer = ConcatMethod(resources(llm_factory(CannedBackend(default=reply), persistent=False))).answer(
            Question(text="q?"), as_retrieved(passages))
        assert answer.is_unknown and answer.text == "unknown" and answer.citations == []
