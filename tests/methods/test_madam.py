"""MADAM-RAG on the canned LLM: agents read only their document, the debate stops when no agent moves, and the
aggregator's agent numbers become citations of those agents' documents."""

import asyncio
import json

import pytest

from tanglerag.methods.base import make_method
from tanglerag.methods.madam.method import MadamRagMethod
from tanglerag.methods.madam.steps import DebateStep
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources

Q = Question(text="When was Michael Jordan born?")
DOCS = [Passage(id="d0", text="Michael Jeffrey Jordan, the basketball player, was born on February 17, 1963."),
        Passage(id="d1", text="Michael Irwin Jordan, the scientist, was born on February 25, 1956."),
        Passage(id="d2", text="Michael Jeffrey Jordan, the basketball player, was born in 1998.")]
ANSWERS = {"February 17, 1963": ("1963", "basketball player"), "February 25, 1956": ("1956", "scientist"),
           "in 1998": ("1998", "basketball player")}


def debate(revise_round_two: bool = False, as_json: bool = False) -> CannedBackend:
    """Agents answer from the year in their document; with ``revise_round_two`` the 1998 agent gives in once it has
    seen the others (round 2) and keeps that answer (round 3). The aggregator keeps 1963 and 1956."""
    def respond(messages):
        system, prompt = messages[0].content, messages[-1].content
        if system.startswith("You are one of several agents"):
            document = prompt.split("Document: ", 1)[1].split("\n", 1)[0]
            answer, _ = next(v for k, v in ANSWERS.items() if k in document)
            if answer == "1998" and revise_round_two and "Other agents:" in prompt:
                answer = "1963"
            if as_json:
                return json.dumps({"answer": answer, "reason": "my document says so"})
            return f"Answer: {answer}\nReason: my document says so"
        if as_json:
            return json.dumps({"answers": [{"answer": "1963", "about": "basketball player", "contexts": [1]},
                                           {"answer": "1956", "about": "scientist", "contexts": [2]}],
                               "summary": "agent 3 contradicts agent 1 about the same player"})
        return "1963 | basketball player | [1]\n1956 | scientist | [2]\nSummary: agent 3 contradicts agent 1"
    return CannedBackend(responder=respond, structured=as_json)


def run(llm_factory, backend, *overrides, structured="off"):
    llm = llm_factory(backend, persistent=False)
    llm.structured = structured
    method = make_method("madam-rag", resources(llm, Settings.load(overrides=list(overrides))))
    return method.answer(Q, as_retrieved(DOCS))


def test_agents_read_only_their_own_document_and_the_debate_stops_when_no_agent_moves(llm_factory):
    backend = debate()
    answer = run(llm_factory, backend)
    agent_prompts = [m[-1].content for m, _ in backend.requests if m[0].content.startswith("You are one of")]
    for prompt, doc in zip(agent_prompts[:3], DOCS, strict=True):  # round 1: the document and nothing else
        assert doc.text in prompt and all(other.text not in prompt for other in DOCS if other is not doc)
        assert "Other agents:" not in prompt
    assert all("Other agents:" in p and "Agent 3: 1998" in p for p in agent_prompts[3:5])  # round 2 sees answers
    for prompt, doc in zip(agent_prompts[3:], DOCS, strict=True):  # round 2: still only its own document's text
        assert doc.text in prompt and all(other.text not in prompt for other in DOCS if other is not doc)
    step = answer.trace.find(DebateStep)
    assert len(step.rounds) == 2 and not step.rounds[1].aggregated and "round 2" in step.stopped
    assert answer.usage.total.llm_calls == 3 + 1 + 3  # round 1 agents + aggregator, round 2 agents


def test_aggregator_agent_numbers_become_citations_of_their_documents(llm_factory):
    answer = run(llm_factory, debate())
    assert answer.text == "1963 (basketball player) [1]\n1956 (scientist) [2]" and answer.citations == ["d0", "d1"]
    assert [(p.answer, p.citations) for p in answer.parts] == [("1963", ["d0"]), ("1956", ["d1"])]


def test_a_revised_answer_takes_another_aggregation_and_the_rounds_are_bounded(llm_factory):
    answer = run(llm_factory, debate(revise_round_two=True))
    step = answer.trace.find(DebateStep)
    assert [t.changed for t in step.rounds[1].agents] == [False, False, True]
    assert step.rounds[1].aggregated and len(step.rounds) == 3 and not step.rounds[2].aggregated
    bounded = run(llm_factory, debate(revise_round_two=True), "madam.rounds=2").trace.find(DebateStep)
    assert len(bounded.rounds) == 2 and bounded.stopped == "the last of 2 round(s)"


@pytest.mark.parametrize("structured", ["on", "repair"])
def test_debate_as_json_reads_the_same(llm_factory, structured):
    backend = debate(as_json=structured == "on")
    answer = run(llm_factory, backend, structured=structured)
    assert answer.citations == ["d0", "d1"] and "agent 3 contradicts" in answer.trace.find(DebateStep).rounds[0].summary
    assert all(c.constrained is (structured == "on") for c in answer.trace.calls)  # repair: every text reply read
    if structured == "on":
        schema = backend.requests[3][1].json_schema  # the aggregator: agent numbers bounded to the agents there are
        assert schema["$defs"]["BoundedPart"]["properties"]["contexts"]["items"]["maximum"] == 3


def test_a_sentence_is_read_as_the_answer():
    from tanglerag.methods.madam.method import read_agent_lines

    assert read_agent_lines("The composer is Johannes Brahms.\nMore.").answer == "The composer is Johannes Brahms"


def test_unreadable_agents_count_as_finding_nothing_and_no_documents_abstain(llm_factory):
    backend = CannedBackend([("Document:", "  \n"), ("Agents:", "unknown")])
    answer = run(llm_factory, backend, "madam.rounds=1")
    assert answer.is_unknown and all(t.unreadable and t.answer == "unknown"
                                     for t in answer.trace.find(DebateStep).rounds[0].agents)
    empty = MadamRagMethod(resources(llm_factory(CannedBackend(), persistent=False))).answer(Q, [])
    assert empty.is_unknown and empty.usage.total.llm_calls == 0


def test_the_aggregators_example_is_an_earlier_turn_not_part_of_the_instructions():
    from tanglerag.methods.madam.prompts import aggregator_messages

    messages = aggregator_messages("Who wrote it?", "Agent 1: Brahms. The document says so.")
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert "1963" in messages[2].content and "1963" not in messages[-1].content
    assert messages[-1].content.startswith("Question: Who wrote it?")
    assert [m.role for m in aggregator_messages("Who wrote it?", "Agent 1: Brahms.", as_json=True)] == ["system", "user"]


def test_awaited_answer_is_the_sync_facades_calls_in_the_same_order(llm_factory):
    """``aanswer`` driven on a loop of the test's own gives what ``answer`` gives through the portal, and the trace
    lists the agents' batch in document order either way."""
    def method():
        return MadamRagMethod(resources(llm_factory(debate(revise_round_two=True), persistent=False)))

    awaited, facade = asyncio.run(method().aanswer(Q, as_retrieved(DOCS))), method().answer(Q, as_retrieved(DOCS))
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert awaited.trace.find(DebateStep) == facade.trace.find(DebateStep)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]
