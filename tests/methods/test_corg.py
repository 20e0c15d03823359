import asyncio
import re

import pytest

from tanglerag.methods.base import make_method
from tanglerag.methods.corg.baselines import (
    KMeansMethod,
    OneCallBaseline,
    RandomMethod,
    RetrieveMethod,
    SeparateMethod,
    SummarizeMethod,
    parse_ranking,
)
from tanglerag.methods.corg.method import CorgMethod
from tanglerag.methods.corg.steps import ContextGraphStep, ContextRankingStep, ContextSummaryStep, GroupsStep
from tanglerag.outputs import AnswerOutput
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage, Question, RetrievedPassage
from tests.conftest import resources

TEXTS = ["Bobby Carpenter (American football) is a linebacker drafted by the Dallas Cowboys.",
         "Bobby Carpenter (ice hockey) played centre for the Washington Capitals.",
         "Bobby Carpenter (American football) was a star baseball pitcher.",
         "Bobby Carpenter (ice hockey) was an NHL forward for Washington."]
Q = Question(text="What sport is Bobby Carpenter associated with?", id="q1")
RELATIONS = {frozenset((0, 1)): "distracting", frozenset((0, 2)): "counterfactual", frozenset((0, 3)): "distracting",
             frozenset((1, 2)): "distracting", frozenset((1, 3)): "duplicated", frozenset((2, 3)): "distracting"}


def responder(messages):
    task = messages[-1].content.rsplit("\n\n", 1)[-1]
    block = messages[-1].content
    if "Give the relation from context" in task:
        focal = int(re.search(r"from context \[(\d+)\]", task).group(1)) - 1
        asked = [int(n) - 1 for n in re.findall(r"\[(\d+)\]", task.split("each of the contexts", 1)[1].split(":")[0])]
        return "\n".join(f"[{o + 1}] - {RELATIONS[frozenset((focal, o))]}" for o in asked)
    if "Rank the contexts" in task:
        return "2, 4, 1"
    if "Summarize" in task:
        return "One Bobby Carpenter [1] plays American football; another [2] plays ice hockey."
    lines = []
    for n, text in re.findall(r"^\[(\d+)\] (.*)$", block, re.MULTILINE):
        if "Summarize" in text:
            continue
        sport = "baseball" if "baseball" in text else "ice hockey" if "hockey" in text else "American football"
        lines.append(f"{sport} | Bobby Carpenter ({sport}) | [{n}]")
    return "\n".join(lines) or "unknown"


def hits():
    return [RetrievedPassage(passage=Passage(id=f"d{i}", text=t), score=1.0, rank=i + 1) for i, t in enumerate(TEXTS)]


@pytest.fixture
def llm(llm_factory):
    return llm_factory(CannedBackend(responder=responder))


def groups_of(answer):
    """Groups as 0-based positions of the test's contexts (ids are d0..d3)."""
    return [[int(pid[1:]) for pid in g.passage_ids] for g in answer.trace.find(GroupsStep).groups]


def test_corg_groups_conflicts_apart_and_cites_sources(llm):
    answer = CorgMethod(resources(llm)).answer(Q, hits())
    step = answer.trace.find(GroupsStep)
    groups = groups_of(answer)
    assert [(d.passage_id, d.reason, d.kept_instead) for d in step.dropped] == [("d3", "duplicate", "d1")]
    assert len(groups) == 2 and not any({0, 2} <= set(g) for g in groups)  # counterfactual pair split
    by_answer = {p.answer: p for p in answer.parts}
    assert set(by_answer) == {"American football", "ice hockey", "baseball"}
    assert by_answer["ice hockey"].citations == ["d1"] and by_answer["baseball"].citations == ["d2"]
    assert "ice hockey (Bobby Carpenter (ice hockey)) [2]" in answer.text
    assert any(g.question.startswith("What sports are") for g in step.groups)  # plural for groups > 1
    graph = answer.trace.find(ContextGraphStep)
    assert {(e.source, e.target, e.relation) for e in graph.edges} >= {("d0", "d2", "counterfactual"),
                                                                        ("d1", "d3", "duplicated")}
    assert [n.number for n in graph.nodes] == [1, 2, 3, 4] and len(graph.edges) == 6
    stages = answer.usage.stages
    assert stages["organize"].llm_calls == 2 and stages["generate"].llm_calls == 2
    assert AnswerOutput.from_answer(answer).compact()["parts"][0].keys() == {"answer", "descriptor", "citations", "group"}


def test_corg_answer_each_calls_once_per_kept_context_and_keeps_group_numbers(llm):
    settings = Settings.load(None, ["corg.answer_each=true"])
    answer = CorgMethod(resources(llm, settings)).answer(Q, hits())
    groups = groups_of(answer)
    assert answer.usage.stages["generate"].llm_calls == 3  # four contexts, the duplicate dropped
    step = answer.trace.find(GroupsStep)
    assert step.answer_each and {g.question for g in step.groups} == {Q.text}
    by_answer = {p.answer: p for p in answer.parts}
    assert set(by_answer) == {"American football", "ice hockey", "baseball"}
    for part in answer.parts:
        cited = int(part.citations[0][1:])
        assert cited in groups[part.group]


def test_baselines_call_counts_and_outputs(llm):
    settings = Settings()
    base = OneCallBaseline(resources(llm, settings)).answer(Q, hits())
    assert {p.answer for p in base.parts} == {"American football", "ice hockey", "baseball"}
    retrieve = RetrieveMethod(resources(llm, Settings.load(None, ["corg.retrieve_top=2"]))).answer(Q, hits())
    assert retrieve.trace.find(ContextRankingStep).chosen == ["d1", "d3"]
    assert {p.answer for p in retrieve.parts} == {"ice hockey"}
    assert retrieve.usage.total.total_calls == 2
    summary = SummarizeMethod(resources(llm, settings)).answer(Q, hits())
    assert summary.trace.find(ContextSummaryStep).summary.startswith("One Bobby")
    assert all(not p.citations for p in summary.parts)
    separate = SeparateMethod(resources(llm, settings)).answer(Q, hits())
    assert separate.usage.stages["generate"].total_calls == 4 and len(separate.parts) == 3


def test_grouping_baselines_use_corgs_group_count(llm):
    random_answer = RandomMethod(resources(llm)).answer(Q, hits())
    random_groups = groups_of(random_answer)
    assert random_answer.trace.find(GroupsStep).strategy == "random"
    assert len(random_groups) == 2 and sorted(i for g in random_groups for i in g) == [0, 1, 2, 3]
    assert groups_of(RandomMethod(resources(llm)).answer(Q, hits())) == random_groups  # seeded
    kmeans = KMeansMethod(resources(llm)).answer(Q, hits())
    assert len(groups_of(kmeans)) == 2
    assert {p.answer for p in kmeans.parts} == {"American football", "ice hockey", "baseball"}


def test_parse_ranking_and_registry(llm):
    assert parse_ranking("3, 1, 3, 9", 4) == [2, 0, 1, 3]
    assert parse_ranking("no idea", 2) == [0, 1]
    for name in ["corg", "base", "retrieve", "summarize", "random", "kmeans", "separate"]:
        method = make_method(name, resources(llm))
        assert method.name == name and method.default_metrics == ("ans", "ent", "ear", "d_f1", "unk", "cited")
    empty = CorgMethod(resources(llm)).answer(Q, [])
    assert empty.is_unknown and empty.text == "unknown"


@pytest.mark.parametrize("name", ["corg", "base", "retrieve", "summarize", "random", "kmeans", "separate"])
def test_awaited_answer_is_the_sync_facades(llm, name):
    """``aanswer`` driven on a loop of the test's own gives what ``answer`` gives through the portal."""
    awaited = asyncio.run(make_method(name, resources(llm)).aanswer(Q, hits()))
    facade = make_method(name, resources(llm)).answer(Q, hits())
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert awaited.usage.total.total_calls == facade.usage.total.total_calls
