"""The real embedded model (Qwen2.5-Coder-1.5B GGUF) answering bundled RAMDocs questions.

No cache: these calls must reach llama.cpp. Each takes a few seconds on 2 CPU cores.
"""

import asyncio

import pytest

from tanglerag.datasets.registry import load_dataset
from tanglerag.embeddings import Embedder
from tanglerag.eval.passages import PassageBuilder
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.llm.llamacpp import LlamaCppBackend
from tanglerag.methods.base import Resources
from tanglerag.methods.concat.method import ConcatMethod
from tanglerag.methods.corg.method import CorgMethod
from tanglerag.methods.corg.steps import ContextGraphStep
from tanglerag.metrics.registry import compute
from tanglerag.settings import Settings
from tanglerag.tracking import track
from tanglerag.types import Question

# one xdist worker runs them all: one model load, and two copies of the model would share two cores
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("embedded-model")]


@pytest.fixture(scope="module")
def setup():
    settings = Settings.load()
    backend = LlamaCppBackend(settings.llm.model, settings.cache_dir, n_ctx=2048, n_threads=settings.llm.n_threads)
    llm = LLM(backend, CallCache(None))
    _, examples = load_dataset("ramdocs-sample")
    builder = PassageBuilder(examples, Embedder(), settings.eval)
    return llm, builder, {ex.question: ex for ex in examples}


def test_answers_bundled_question_with_citation(setup):
    llm, builder, examples = setup
    example = examples["What sport is Bobby Carpenter associated with?"]
    hits = builder.build(example, 2)
    answer = ConcatMethod(Resources.for_llm(llm)).answer(Question(text=example.question), hits)
    assert not answer.is_unknown, answer.trace.calls[0].replies
    assert compute(["f1"], answer, example)["f1"] >= 0.5, answer.text
    assert answer.citations and set(answer.citations) <= {h.passage.id for h in hits}
    cited_text = " ".join(h.passage.text for h in hits if h.passage.id in answer.citations)
    assert "football" in cited_text.lower()
    assert answer.usage.totals()["llm_calls"] == 1 and answer.usage.totals()["completion_tokens"] > 0


def test_says_unknown_when_passages_lack_the_answer(setup):
    llm, builder, examples = setup
    carpenter = examples["What sport is Bobby Carpenter associated with?"]
    unrelated = builder.build(carpenter, 2)
    answer = ConcatMethod(Resources.for_llm(llm)).answer(Question(text="What is the population of Pilzno?"), unrelated)
    assert answer.is_unknown, answer.trace.calls[0].replies
    assert answer.citations == []


@pytest.mark.slow
def test_corg_extract_mode_builds_a_full_graph_and_cites_its_sources(setup):
    llm, builder, examples = setup
    example = examples["What sport is Bobby Carpenter associated with?"]
    hits = builder.build(example, 2)
    settings = Settings.load(None, ["corg.graph=extract"])
    answer = CorgMethod(Resources.for_llm(llm, settings)).answer(Question(text=example.question), hits)
    graph = answer.trace.find(ContextGraphStep)
    organize_calls = [c for c in answer.trace.calls if c.stage == "organize"]
    assert len(graph.edges) == 1 and len(organize_calls) == 2  # one call per context, every pair labelled
    assert answer.parts, [c.replies for c in answer.trace.calls]
    assert all(set(p.citations) <= {h.passage.id for h in hits} for p in answer.parts)
    assert "football" in answer.text.lower(), answer.text


def test_cdit_judge_tells_opposite_predicates_apart(setup):
    from tanglerag.methods.cdit.prompts import judge_messages, parse_verdict

    llm, _, _ = setup
    question = "Who switched on the radio in the kitchen?"
    cases = {"Jack switched on the radio in the kitchen.": True, "Tom switched off the radio in the kitchen.": False,
             "The kitchen radio is a 1960s model.": False, "Jack turned the kitchen radio on at noon.": True}
    verdicts = {p: parse_verdict(llm.complete(judge_messages("phi1", question, p), llm.params(max_tokens=4)).text)
                for p in cases}
    assert verdicts == cases


def test_multi_answer_prompt_abstains_on_unrelated_contexts(setup):
    from tanglerag.methods.corg.baselines import OneCallBaseline

    llm, builder, examples = setup
    unrelated = builder.build(examples["What sport is Bobby Carpenter associated with?"], 3)
    answer = OneCallBaseline(Resources.for_llm(llm)).answer(Question(text="What is the population of Pilzno?"), unrelated)
    assert answer.is_unknown and not answer.parts, answer.trace.calls[0].replies


def test_a_prompt_longer_than_the_window_names_the_setting_to_raise(setup):
    from tanglerag.errors import LLMError
    from tanglerag.trace import Message

    llm, _, _ = setup  # the backend was opened with n_ctx=2048
    with pytest.raises(LLMError, match=r"does not fit the model's context window \(llm.n_ctx=2048\)"):
        llm.complete([Message(role="user", content="radio " * 3000)], llm.params(max_tokens=4))


@pytest.mark.slow
def test_a_batched_judgment_has_room_for_a_verdict_on_every_passage(setup):
    from tanglerag.methods.base import make_method
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage
    from tests.conftest import as_retrieved

    llm, _, _ = setup
    people = ["Jack", "Tom", "Anna", "Maria", "Ravi", "Chen", "Olga", "Sam", "Lea", "Omar", "Ines", "Kofi"]
    hits = as_retrieved([Passage(id=f"p{i}", text=f"{name} switched {'on' if i % 2 else 'off'} the radio in the kitchen.")
                         for i, name in enumerate(people)])
    settings = Settings.load(None, ["cdit.batched=true"])
    method = make_method("cdit", Resources.for_llm(llm, settings, embedder=HashEmbedder()))
    verdicts = asyncio.run(method.judge("Who switched on the radio in the kitchen?", hits))
    assert None not in verdicts, verdicts  # a cut-off reply would leave the last passages unread


@pytest.mark.slow
def test_constrained_relations_always_parse_on_the_users_mercury_notes(setup):
    """The case that motivated structured outputs: four short notes on four different "Mercury"s, where the text
    prompt's replies parsed for none of the six pairs; under the schema every pair gets a relation."""
    from tanglerag.methods.corg.config import CorgConfig
    from tanglerag.methods.corg.constructor import GraphConstructor
    from tanglerag.types import Passage, RetrievedPassage

    llm, _, _ = setup
    notes = ["Mercury is a chemical element with symbol Hg, a silvery metal that is liquid at room temperature.",
             "Mercury is the smallest planet of the Solar System and the closest to the Sun.",
             "Freddie Mercury was the lead singer of the rock band Queen.",
             "Rumour: the planet Mercury is made of liquid metal."]
    hits = [RetrievedPassage(passage=Passage(id=f"n{i}", text=t), score=1.0, rank=i + 1) for i, t in enumerate(notes)]
    constrained = LLM(llm.backend, CallCache(None), structured="on")
    with track() as tracker:
        constructor = GraphConstructor(constrained, CorgConfig(graph="pairwise"), 100)
        graph = asyncio.run(constructor.build("What is Mercury?", hits))
    assert graph.unparsed == 0 and graph.pairs_judged >= 3
    assert all(call.constrained for call in tracker.calls)


@pytest.mark.slow
def test_madam_rag_debates_the_two_answer_sample_question(setup):
    """MADAM-RAG on the demo's two-answer question (Brahms and Mozart), its own six documents, two rounds at most:
    every agent's reply reads, and each kept answer cites documents whose agents gave it."""
    from tanglerag.methods.base import make_method
    from tanglerag.methods.madam.steps import DebateStep
    from tanglerag.types import RetrievedPassage

    llm, _, examples = setup
    example = examples["Who is the composer of String Quintet No. 2?"]
    hits = [RetrievedPassage(passage=p, score=1.0, rank=i + 1) for i, p in enumerate(example.passages)]
    method = make_method("madam-rag", Resources.for_llm(llm, Settings.load(None, ["madam.rounds=2"])))
    answer = method.answer(Question(text=example.question), hits)
    step = answer.trace.find(DebateStep)
    assert step.rounds and not any(t.unreadable for r in step.rounds for t in r.agents), step.lines()
    assert not answer.is_unknown and compute(["answer_recall"], answer, example)["answer_recall"] > 0, answer.text
    said = {t.passage_id: t.answer.lower() for t in step.rounds[-1].agents}
    for part in answer.parts:
        assert part.citations and any(part.answer.lower() in said[c] or said[c] in part.answer.lower()
                                      for c in part.citations), (part, said)
