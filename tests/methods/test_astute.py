"""Astute RAG on the canned LLM: memory passages are marked and never cited, consolidation maps sources back to
documents, and the choice cites the retrieved documents of the groups it names."""

import asyncio
import json

import pytest

from tanglerag.methods.astute.steps import AstuteStep
from tanglerag.methods.base import make_method
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources

Q = Question(text="Who composed String Quintet No. 2?")
DOCS = [Passage(id="brahms", text="Brahms wrote his String Quintet No. 2 in G major in 1890."),
        Passage(id="fake", text="String Quintet No. 2 is a work by Ludwig van Beethoven."),
        Passage(id="weather", text="It rained in Vienna all week.")]


def astute(as_json: bool = False, groups=None) -> CannedBackend:
    """Memory recalls Mozart's quintet; retrieved [1] and memory [4] are about different works; [2] conflicts."""
    def respond(messages):
        system, prompt = messages[0].content, messages[-1].content
        if system.startswith("You write what you know"):
            memory = "Mozart wrote a String Quintet No. 2 in C minor, K. 406."
            return json.dumps({"passages": [memory]}) if as_json else f"Passage: {memory}"
        if system.startswith("You consolidate"):
            if as_json:
                return json.dumps({"groups": [
                    {"statement": "Brahms's quintet in G major", "answer": "Brahms", "sources": [1], "conflict": False},
                    {"statement": "Beethoven wrote it", "answer": "Beethoven", "sources": [2], "conflict": True},
                    {"statement": "Mozart's quintet in C minor", "answer": "Mozart", "sources": [4], "conflict": False}]})
            return groups(prompt) if groups else ("Brahms's quintet in G major | Brahms | [1] | consistent\n"
                              "Beethoven wrote it | Beethoven | [2] | conflict\n"
                              "Mozart's quintet in C minor | Mozart | [4] | consistent")
        if as_json:
            return json.dumps({"answers": [{"answer": "Johannes Brahms", "about": "in G major", "contexts": [1]},
                                           {"answer": "Mozart", "about": "in C minor", "contexts": [3]}],
                               "reason": "two works share the name; Beethoven conflicts"})
        return "Johannes Brahms | in G major | [1]\nMozart | in C minor | [3]\nReason: two works share the name"
    return CannedBackend(responder=respond, structured=as_json)


def run(llm_factory, backend, *overrides, structured="off"):
    llm = llm_factory(backend, persistent=False)
    llm.structured = structured
    return make_method("astute-rag", resources(llm, Settings.load(overrides=list(overrides)))).answer(
        Q, as_retrieved(DOCS))


@pytest.mark.parametrize("structured", ["off", "on"])
def test_memory_is_marked_and_never_cited_and_choices_cite_their_groups_documents(llm_factory, structured):
    backend = astute(as_json=structured == "on")
    answer = run(llm_factory, backend, structured=structured)
    step = answer.trace.find(AstuteStep)
    assert step.internal == ["Mozart wrote a String Quintet No. 2 in C minor, K. 406."]
    consolidate_prompt = next(m[-1].content for m, _ in backend.requests if m[0].content.startswith("You consolidate"))
    assert "[1] (retrieved) Brahms wrote" in consolidate_prompt and "[4] (memory) Mozart wrote" in consolidate_prompt
    assert [g.sources for g in step.rounds[0]] == [["brahms"], ["fake"], ["memory-1"]] and step.rounds[0][1].conflict
    assert [(p.answer, p.citations) for p in answer.parts] == [("Johannes Brahms", ["brahms"]), ("Mozart", [])]
    assert answer.citations == ["brahms"] and step.chosen_groups == [1, 3]  # memory is chosen, never cited
    assert answer.usage.total.llm_calls == 3 and all(c.constrained is (structured == "on") for c in answer.trace.calls)


def test_the_async_path_answers_as_the_sync_facade(llm_factory):
    method = make_method("astute-rag", resources(llm_factory(astute(), persistent=False), Settings()))
    awaited = asyncio.run(method.aanswer(Q, as_retrieved(DOCS)))
    facade = method.answer(Q, as_retrieved(DOCS))
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]


def test_a_second_round_consolidates_groups_and_keeps_their_sources(llm_factory):
    def rounds(prompt):
        if "(retrieved)" in prompt:  # round 1 sees the sources
            return ("Brahms's quintet | Brahms | [1] | consistent\nBeethoven | Beethoven | [2] | conflict\n"
                    "Mozart's quintet | Mozart | [4] | consistent")
        return "Two works | Brahms | [1][3] | consistent"  # round 2 sees round 1's groups

    backend = astute(groups=rounds)
    step = run(llm_factory, backend, "astute.iterations=2").trace.find(AstuteStep)
    assert len(step.rounds) == 2 and step.rounds[1][0].sources == ["brahms", "memory-1"]
    second = [m[-1].content for m, _ in backend.requests if m[0].content.startswith("You consolidate")][1]
    assert "[1] (1 retrieved) Brahms's quintet Answer: Brahms" in second and "[3] (1 memory) Mozart" in second


def test_unreadable_consolidation_keeps_each_source_apart_and_no_memory_when_asked_for_none(llm_factory):
    backend = astute(groups=lambda prompt: "I am not sure.")
    answer = run(llm_factory, backend, "astute.internal_passages=0")
    step = answer.trace.find(AstuteStep)
    assert step.internal == [] and step.unreadable == 1 and len(step.rounds[0]) == len(DOCS)
    assert not any(m[0].content.startswith("You write what you know") for m, _ in backend.requests)
    assert answer.citations == ["brahms", "weather"]  # groups 1 and 3 chosen: now the 1st and 3rd documents alone


def test_group_blocks_the_small_model_writes_are_read_and_a_quoted_passage_gives_no_sources():
    """Two of the shapes Qwen2.5-1.5B wrote on RAMDocs instead of one line per group (17 of 41 questions read as
    blocks; the rest copied the passages out and are still unreadable)."""
    from tanglerag.methods.astute.method import read_group_lines

    headed = ("Group 1: [1] (retrieved) and [4] (retrieved)\nWhat the group states: Powell plays football.\n"
              "Its answer: Football\n[1][4] | consistent\n\nGroup 2: [2] (retrieved)\nWhat the group states: he "
              "boxed.\nIts answer: boxing\n[2] | conflict\n\nThere are no conflicts between any of the groups.")
    listed = ("Group 1: \n- What the group states: Big Girl is a documentary.\n- Its answer: documentary\n"
              "- [source numbers]: [1]\n- conflict or consistent: consistent\n"
              "Group 2: \n- Its answer: short film\n- [source numbers]: [2]\n- conflict or consistent: conflict")
    quoted = "Group 1: [1] (retrieved) Census [ 11 ] of 2010 [3] people\nGroup 2: [2] (retrieved) Demographics"
    read = {name: read_group_lines(text, 4) for name, text in [("headed", headed), ("listed", listed),
                                                                ("quoted", quoted)]}
    assert [(g.statement, g.answer, g.sources, g.conflict) for g in read["headed"].groups] == [
        ("Powell plays football.", "Football", [1, 4], False), ("he boxed.", "boxing", [2], True)]
    assert [(g.statement, g.answer, g.sources, g.conflict) for g in read["listed"].groups] == [
        ("Big Girl is a documentary.", "documentary", [1], False), ("short film", "short film", [2], True)]
    assert read["quoted"] is None  # passages copied out: no answer, so no group
