"""``corg.conflicts=support``: an answer contradicted by a better-backed one is dropped, and the trace says so."""

import re

import pytest

from tanglerag.methods.corg.conflicts import overrule
from tanglerag.methods.corg.method import CorgMethod
from tanglerag.methods.corg.reranker import Dropped, Organized
from tanglerag.methods.corg.steps import ConflictsStep
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import AnswerPart, Passage, Question, RetrievedPassage
from tests.conftest import as_retrieved, resources

TEXTS = ["Loitering with Intent is a 1981 novel by Muriel Spark.",
         "Muriel Spark's novel Loitering with Intent came out in 1981.",
         "Loitering with Intent is a 1975 film shot in London."]
RELATIONS = {(1, 2): "duplicated", (1, 3): "counterfactual"}  # context numbers as the prompt shows them


def responder(messages):
    content = messages[-1].content
    if "Give the relation from context" in content:
        focal = int(re.search(r"from context \[(\d+)\]", content).group(1))
        return "\n".join(f"[{n}] - {RELATIONS.get((focal, n), 'none')}" for n in (2, 3) if n > focal)
    return "\n".join(f"{'film' if 'film' in text else 'novel'} | Loitering with Intent | [{n}]"
                     for n, text in re.findall(r"^\[(\d+)\] (.*)$", content, re.MULTILINE))


def passages() -> list[RetrievedPassage]:
    return as_retrieved([Passage(id=f"d{i}", text=t) for i, t in enumerate(TEXTS)])


def part(answer: str, *citations: str, descriptor: str = "") -> AnswerPart:
    return AnswerPart(answer=answer, descriptor=descriptor, citations=list(citations))


@pytest.mark.parametrize(("conflicts", "answers"), [("keep", ["novel", "film"]), ("support", ["novel"])])
def test_the_answer_of_the_context_outnumbered_by_a_duplicated_one_is_overruled(llm_factory, conflicts, answers):
    settings = Settings.load(None, [f"corg.conflicts={conflicts}"])
    answer = CorgMethod(resources(llm_factory(CannedBackend(responder=responder)), settings)).answer(
        Question(text="What is the medium of Loitering with Intent?", id="q"), passages())
    assert [p.answer for p in answer.parts] == answers and answer.usage.total.total_calls == 3  # the rule costs no call
    step = answer.trace.find(ConflictsStep)
    if conflicts == "keep":
        assert step is None
    else:
        assert [(o.answer, o.citations, o.support, o.kept_answer, o.kept_support) for o in step.overruled] == [
            ("film", ["d2"], 1, "novel", 2)]  # novel: d0 and its dropped duplicate d1
        assert "film (backed by 1: d2) lost to novel (backed by 2)" in "\n".join(step.lines())


def test_a_tie_keeps_both_and_only_contradicting_parts_compete():
    organized = Organized(groups=[[0], [2], [1]], conflicts=[(0, 2)])
    parts = [part("novel", "d0"), part("film", "d2"), part("poem", "d1")]
    kept, step = overrule(parts, organized, passages())
    assert kept == parts and step.overruled == []  # 1 against 1: the graph cannot say which is right
    backed = Organized(groups=[[0], [2]], dropped=[Dropped(1, "duplicate", 0)], conflicts=[(0, 2)])
    same = [part("novel", "d0", descriptor="Spark's book"), part("Novel", "d2", descriptor="the film")]
    assert overrule(same, backed, passages())[0] == same  # the same answer never contradicts itself
    lone = [part("novel", "d0"), part("poem", "d2")]
    assert overrule(lone, Organized(groups=[[0], [2]], dropped=[Dropped(1, "duplicate", 0)]), passages())[0] == lone
