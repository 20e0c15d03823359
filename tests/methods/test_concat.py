import asyncio

import pytest

from tanglerag.methods.concat.method import ConcatMethod
from tanglerag.settings import Settings
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
    assert answer.usage.totals()["llm_calls"] == 1


def test_out_of_range_citations_are_dropped(llm_factory, passages):
    backend = CannedBackend(default="Madrid [3] [9]")
    answer = ConcatMethod(resources(llm_factory(backend))).answer(Question(text="q?"), as_retrieved(passages[:3]))
    assert answer.citations == ["p3"] and answer.text == "Madrid [3]"


def test_garbage_and_abstention_become_unknown(llm_factory, passages):
    for reply in ["", "???", "The passages do not mention it."]:
        answer = ConcatMethod(resources(llm_factory(CannedBackend(default=reply), persistent=False))).answer(
            Question(text="q?"), as_retrieved(passages))
        assert answer.is_unknown and answer.text == "unknown" and answer.citations == []


def test_paper_004_comparison_asks_with_the_post_fusion_prompt(llm_factory, passages):
    from tanglerag.methods.post_fusion.methods import PostFusionMethod
    from tanglerag.settings import Settings
    from tanglerag.stages.generate import SINGLE_PASSAGE_SYSTEM

    settings = Settings.load(overrides=["methods.concat_prompt=post_fusion"])
    backend = CannedBackend(default="Madrid")
    q = Question(text="What is the capital of Spain?")
    answer = ConcatMethod(resources(llm_factory(backend), settings)).answer(q, as_retrieved(passages))
    PostFusionMethod(resources(llm_factory(backend), settings)).answer(q, as_retrieved(passages[:1]))
    (concat_messages, _), (pf_messages, _) = backend.requests
    assert concat_messages[0].content == pf_messages[0].content == SINGLE_PASSAGE_SYSTEM  # one system prompt
    assert "Give your best extractive guess" in concat_messages[0].content and "A: Radiohead" in concat_messages[0].content
    assert all(p.text.split()[0] in concat_messages[-1].content for p in passages)  # every passage, in one call
    assert concat_messages[-1].content.rstrip().endswith("Answer:") and answer.text == "Madrid"


@pytest.mark.parametrize("prompt", ["cited", "post_fusion"])
def test_awaited_answer_is_the_sync_facades(llm_factory, passages, prompt):
    """``aanswer`` driven on a loop of the test's own gives what ``answer`` gives through the portal."""
    settings = Settings.load(overrides=[f"methods.concat_prompt={prompt}"])
    q, hits = Question(text="What is the capital of Spain?"), as_retrieved(passages)

    def method():
        return ConcatMethod(resources(llm_factory(CannedBackend(default="Madrid [3]"), persistent=False), settings))

    awaited, facade = asyncio.run(method().aanswer(q, hits)), method().answer(q, hits)
    assert (awaited.text, awaited.citations, awaited.is_unknown) == (facade.text, facade.citations, False)
    assert awaited.citations == ["p3"] and awaited.usage.totals()["llm_calls"] == 1
