"""The typed trace survives JSON: every step kind comes back as the same model."""

from tanglerag.methods.corg.steps import (
    ContextGraphStep,
    ContextGroup,
    ContextRankingStep,
    ContextSummaryStep,
    DroppedContext,
    GraphEdge,
    GraphNode,
    GroupsStep,
)
from tanglerag.methods.post_fusion.steps import AnswerPoolStep, DistillStep, FallbackStep, PoolAnswer, RationaleStep
from tanglerag.outputs import AnswerOutput
from tanglerag.stages.vote import VoteCount
from tanglerag.trace import LLMCall, Message, Trace
from tanglerag.types import Answer
from tanglerag.users import PersonalContextStep


def full_trace() -> Trace:
    call = LLMCall(stage="generate", messages=[Message(role="user", content="q")], replies=["a"], prompt_tokens=3,
                   completion_tokens=1, cached=True, model_seconds=0.25)
    steps = [
        ContextGraphStep(mode="pairwise", nodes=[GraphNode(number=1, passage_id="a"), GraphNode(number=2, passage_id="b")],
                         edges=[GraphEdge(source="a", target="b", relation="counterfactual", origin="llm")],
                         pairs_judged=1, pairs_total=1),
        GroupsStep(strategy="corg", groups=[ContextGroup(passage_ids=["a"], question="q?")],
                   dropped=[DroppedContext(passage_id="b", reason="duplicate", kept_instead="a")]),
        ContextRankingStep(ranking=["b", "a"], chosen=["b"]),
        ContextSummaryStep(summary="s"),
        AnswerPoolStep(pool=[PoolAnswer(passage_id="a", answer="x", unknown=False)],
                       tally=[VoteCount(answer="x", votes=1, passage_ids=["a"])], winner="x"),
        FallbackStep(fired=True),
        DistillStep(kept=["a"], candidates=["x"], chosen="x"),
        RationaleStep(format_ok=True, cited_numbers=[1]),
        PersonalContextStep(user="u", context_id="c1", text="I live in Bern.", score=0.5, lam=0.6, beam=10),
    ]
    return Trace(calls=[call], steps=steps)


def test_every_step_kind_round_trips_through_json():
    trace = full_trace()
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again == trace
    assert [type(s) for s in again.steps] == [type(s) for s in trace.steps]
    assert again.find(FallbackStep).fired is True and again.find(ContextGraphStep).edges[0].relation == "counterfactual"


def test_answer_output_has_the_trace_only_when_asked():
    answer = Answer(question="q", method="m", text="x", trace=full_trace())
    assert "trace" not in AnswerOutput.from_answer(answer).compact()
    out = AnswerOutput.from_answer(answer, trace=True).compact()
    assert out["trace"]["calls"][0]["replies"] == ["a"] and len(out["trace"]["steps"]) == 9
    assert Answer.model_validate_json(answer.model_dump_json()).trace == answer.trace
