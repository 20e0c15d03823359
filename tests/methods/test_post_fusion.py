import asyncio

import pytest

from tanglerag.config import MethodsConfig
from tanglerag.methods.base import method_classes
from tanglerag.methods.concat.method import ConcatMethod
from tanglerag.methods.post_fusion.methods import (
    ConcatPostFusionMethod,
    PostFusionConcatMethod,
    PostFusionMethod,
    PruningMethod,
    SummaryCoTMethod,
)
from tanglerag.methods.post_fusion.steps import AnswerPoolStep, DistillStep, FallbackStep, RationaleStep
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Question
from tests.conftest import as_retrieved, resources

Q = Question(text="What is the capital of Spain?")


def per_passage(answers: dict[str, str], concat: str = "unknown", distill: str = "unknown") -> CannedBackend:
    """Reply per single-passage prompt by a word found in its context; fixed replies for the other prompts."""
    def respond(messages):
        system, prompt = messages[0].content, messages[-1].content
        if system.startswith("You choose"):
            return distill
        if "Passages:" in prompt:
            return concat
        for word, reply in answers.items():
            if word in prompt.split("Context:")[-1]:
                return reply
        return "unknown"
    return CannedBackend(responder=respond)


def run(cls, backend, llm_factory, passages, **cfg):
    llm = llm_factory(backend, persistent=False)
    answer = cls(resources(llm, Settings(methods=MethodsConfig(**cfg)))).answer(Q, as_retrieved(passages))
    return answer, answer.usage


def test_post_fusion_votes_and_excludes_unknowns(llm_factory, passages):
    backend = per_passage({"Paris": "Madrid", "Berlin": "unknown", "Madrid": "Madrid.", "Rome": "Rome",
                           "Vienna": "I don't know"})
    answer, tracker = run(PostFusionMethod, backend, llm_factory, passages)
    assert answer.text == "Madrid" and answer.citations == ["p1", "p3"]
    assert len(backend.requests) == 5 and tracker.stages["post_fusion"].llm_calls == 5
    pool = answer.trace.find(AnswerPoolStep)
    assert [c.unknown for c in pool.pool] == [False, True, False, False, True]
    assert pool.winner == "Madrid" and [(v.votes, v.passage_ids) for v in pool.tally] == [(2, ["p1", "p3"]),
                                                                                           (1, ["p4"])]


def test_post_fusion_tie_goes_to_best_ranked_passage(llm_factory, passages):
    backend = per_passage({"Paris": "Lyon", "Berlin": "Madrid", "Madrid": "Madrid", "Rome": "Lyon"})
    answer, _ = run(PostFusionMethod, backend, llm_factory, passages)
    assert answer.text == "Lyon"  # 2 votes each; Lyon's best passage is rank 1


def test_the_async_path_answers_as_the_sync_facade(llm_factory, passages):
    answers = {"Paris": "Madrid", "Berlin": "unknown", "Madrid": "Madrid.", "Rome": "Rome"}
    for cls in (PostFusionMethod, PostFusionConcatMethod, PruningMethod):
        method = cls(resources(llm_factory(per_passage(answers, distill="Madrid"), persistent=False), Settings()))
        awaited = asyncio.run(method.aanswer(Q, as_retrieved(passages)))
        facade = method.answer(Q, as_retrieved(passages))
        assert (awaited.text, awaited.citations) == (facade.text, facade.citations), cls.name
        assert len(awaited.trace.calls) == len(facade.trace.calls)


def test_post_fusion_all_unknown(llm_factory, passages):
    answer, _ = run(PostFusionMethod, per_passage({}), llm_factory, passages)
    assert answer.is_unknown and answer.citations == []


def test_concat_pf_falls_back_only_on_unknown(llm_factory, passages):
    sure = per_passage({"Madrid": "Madrid"}, concat="Madrid [3]")
    answer, tracker = run(ConcatPostFusionMethod, sure, llm_factory, passages)
    assert answer.text == "Madrid [3]" and answer.trace.find(FallbackStep).fired is False
    assert len(sure.requests) == 1 and "post_fusion" not in tracker.stages

    unsure = per_passage({"Madrid": "Madrid", "Rome": "Madrid"}, concat="unknown")
    answer, tracker = run(ConcatPostFusionMethod, unsure, llm_factory, passages)
    assert answer.text == "Madrid" and answer.trace.find(FallbackStep).fired is True
    assert answer.citations == ["p3", "p4"] and len(unsure.requests) == 6
    assert tracker.totals()["llm_calls"] == 6


def test_pf_concat_distils_from_kept_passages(llm_factory, passages):
    backend = per_passage({"Paris": "Paris", "Madrid": "Madrid"}, distill="Madrid")
    answer, tracker = run(PostFusionConcatMethod, backend, llm_factory, passages)
    assert answer.text == "Madrid" and answer.citations == ["p3"]
    assert answer.trace.find(DistillStep).kept == ["p1", "p3"] and answer.trace.find(AnswerPoolStep).voted is False
    distill_prompt = backend.requests[-1][0][-1].content
    assert "- Paris\n- Madrid" in distill_prompt
    assert "Berlin is the capital" not in distill_prompt and "[2] Madrid" in distill_prompt
    assert tracker.stages["distill"].llm_calls == 1


def test_pf_concat_skips_distiller_when_nothing_is_kept(llm_factory, passages):
    backend = per_passage({})
    answer, _ = run(PostFusionConcatMethod, backend, llm_factory, passages)
    assert answer.is_unknown and len(backend.requests) == 5


@pytest.mark.parametrize("cls, word", [(PruningMethod, "rule out"), (SummaryCoTMethod, "sum up")])
def test_chain_of_thought_parses_final_answer(llm_factory, passages, cls, word):
    reply = "Rationale: Let's think step by step. Source 1 is about France. Source 3 names Madrid.\nAnswer: Madrid"
    backend = CannedBackend(default=reply)
    answer, _ = run(cls, backend, llm_factory, passages)
    assert answer.text == "Madrid" and answer.citations == ["p1", "p3"]
    messages = backend.requests[0][0]
    assert word in messages[0].content and [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert "Urquhart Castle" in messages[2].content


def test_chain_of_thought_without_answer_line_is_unknown(llm_factory, passages):
    answer, _ = run(PruningMethod, CannedBackend(default="Let me think about the sources..."), llm_factory,
                    passages)
    assert answer.is_unknown and answer.trace.find(RationaleStep).format_ok is False


def test_self_consistency_samples_and_votes(llm_factory, passages):
    replies = iter(["Madrid [3]", "unknown", "Madrid [3]", "Rome [4]"])
    backend = CannedBackend(responder=lambda m: next(replies))
    backend.generate = _one_reply_per_sample(backend)
    answer, _ = run(ConcatMethod, backend, llm_factory, passages, samples=4)
    params = backend.requests[0][1]
    assert params.n == 4 and params.temperature == 0.7
    assert answer.text == "Madrid [3]" and answer.citations == ["p3"]


def _one_reply_per_sample(backend):
    from tanglerag.llm.base import RawCompletion

    def generate(messages, params):
        backend.requests.append((messages, params))
        texts = [backend.reply_for(messages) for _ in range(params.n)]
        return RawCompletion(texts=texts, prompt_tokens=10, completion_tokens=params.n)
    return generate


def test_all_paper_methods_are_registered():
    assert {"concat", "post-fusion", "pruning", "summary", "concat+pf", "pf+concat"} <= set(method_classes())


def as_json_replies(backend: CannedBackend) -> CannedBackend:
    """The same replies as a model constrained to the schema would write them (the text path's words as JSON)."""
    text_responder = backend.responder

    def respond(messages):
        word = text_responder(messages)
        if "passages" in messages[0].content.split("Reply with JSON")[-1]:
            answer, _, marks = word.partition(" [")
            return f'{{"answer": "{answer}", "passages": [{marks.rstrip("]")}]}}' if marks else \
                f'{{"answer": "{answer}", "passages": []}}'
        return f'{{"answer": "{word}"}}'
    return CannedBackend(responder=respond, structured=True)


@pytest.mark.parametrize("mode", ["off", "on"])
def test_post_fusion_and_its_fallbacks_decide_the_same_as_text_or_json(llm_factory, passages, mode):
    answers = {"Paris": "Madrid", "Berlin": "unknown", "Madrid": "Madrid.", "Rome": "Rome"}
    for cls, expected in [(PostFusionMethod, "Madrid"), (ConcatPostFusionMethod, "Madrid"),
                          (PostFusionConcatMethod, "Madrid")]:
        backend = per_passage(answers, distill="Madrid")
        backend = as_json_replies(backend) if mode == "on" else backend
        llm = llm_factory(backend, persistent=False)
        llm.structured = mode
        answer = cls(resources(llm, Settings())).answer(Q, as_retrieved(passages))
        assert answer.text == expected, cls.name
        assert all(c.constrained is (mode == "on") for c in answer.trace.calls)
    backend = as_json_replies(per_passage({}, concat="Madrid [3]"))
    llm = llm_factory(backend, persistent=False)
    llm.structured = "on"
    answer = ConcatMethod(resources(llm, Settings())).answer(Q, as_retrieved(passages))
    assert answer.text == "Madrid [3]" and answer.citations == ["p3"]
    contexts = backend.requests[0][1].json_schema["properties"]["passages"]["items"]
    assert contexts["maximum"] == len(passages)
