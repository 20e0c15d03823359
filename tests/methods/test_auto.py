"""``auto`` on the canned LLM: the cheap signals decide the plain cases without a call, one probe call reads the
rest, each tangle goes where ``auto.routes`` says, and the chosen method's own trace follows the route."""

import asyncio

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import ConfigError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.methods.auto.probe import PassageAnswer, classify, entity_signals, ranking_signals
from tanglerag.methods.auto.steps import AutoStep
from tanglerag.methods.base import make_method
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources

Q = Question(text="When was Michael Jordan born?")
DOCS = [Passage(id="d0", text="Michael Jeffrey Jordan, the basketball player, was born in 1963."),
        Passage(id="d1", text="Michael Irwin Jordan, the scientist, was born in 1956."),
        Passage(id="d2", text="Michael Jeffrey Jordan, the basketball player, was born in 1998.")]


def probe_reply(lines: str, answer: str = "1963 [1]"):
    """The probe replies ``lines``; the routed concat-style answer replies ``answer``."""
    def respond(messages):
        return lines if messages[0].content.startswith("You read numbered passages and a question") else answer
    return CannedBackend(responder=respond)


def run(llm_factory, backend, docs, *overrides):
    settings = Settings.load(overrides=["auto.routes.clean=concat", "auto.routes.ambiguous=separate",
                                        "auto.routes.conflicting=concat", "auto.routes.mixed=separate",
                                        "auto.entity_signals=false", *overrides])
    return make_method("auto", resources(llm_factory(backend, persistent=False), settings)).answer(Q, as_retrieved(docs))


def test_plain_cases_are_decided_without_a_call(llm_factory):
    backend = probe_reply("")
    one = run(llm_factory, backend, DOCS[:1])
    step = one.trace.find(AutoStep)
    assert (step.tangle, step.route) == ("clean", "concat") and one.usage.stages["probe"].llm_calls == 0
    copies = run(llm_factory, probe_reply(""), [DOCS[0], Passage(id="d0b", text=DOCS[0].text)])
    assert copies.trace.find(AutoStep).why.startswith("all 2 passages are near-copies")
    assert copies.usage.total.llm_calls == 1  # the concat answer only


@pytest.mark.parametrize(("lines", "tangle", "route"), [
    ("[1] 1963 | basketball player\n[2] 1956 | scientist\n[3] 1963 | basketball player", "ambiguous", "separate"),
    ("[1] 1963 | basketball player\n[2] 1998 | basketball player\n[3] unknown | none", "conflicting", "concat"),
    ("[1] 1963 | basketball player\n[2] 1956 | scientist\n[3] 1998 | basketball player", "mixed", "separate"),
    ("[1] unknown | none\n[2] unknown | none", "low-coverage", "concat"),
])
def test_one_probe_call_reads_the_tangle_and_the_route_answers(llm_factory, lines, tangle, route):
    backend = probe_reply(lines)
    answer = run(llm_factory, backend, DOCS, "auto.routes.low-coverage=concat")
    step = answer.trace.find(AutoStep)
    assert (step.tangle, step.route) == (tangle, route), step.why
    assert answer.usage.stages["probe"].llm_calls == 1 and step.signals["passages"] == 3
    assert answer.trace.calls[0].stage == "probe" and len(answer.trace.calls) > 1  # the route's calls follow
    assert step.headline() == f"tangle: {tangle} — {step.why} -> {route}"  # the line `ask` prints
    assert step.lines()[3:] == [f"  [{p.number}] {p.answer} | {p.descriptor}" for p in step.passages]
    assert len(step.passages) == len([line for line in lines.splitlines() if line])


@pytest.mark.parametrize(("lines", "text"), [
    ("[1] 1963 | basketball player\n[2] 1956 | scientist\n[3] 1963 | basketball player",
     "1963 (basketball player) [1][3]\n1956 (scientist) [2]"),  # ambiguous: one line per entity
    ("[1] 1998 | basketball player\n[2] 1963 | basketball player\n[3] 1963 | none",
     "1963 (basketball player) [2][3]"),  # conflicting: the vote, with the passage that names no one beside it
    ("[1] 1998 | none\n[2] 1963 | none\n[3] unknown | none", "1998 [1]"),  # a tie goes to the better-ranked
    ("[1] unknown | none\n[2] unknown | none", "unknown"),
])
def test_the_probe_route_answers_from_the_probes_own_answers_with_no_other_call(llm_factory, lines, text):
    routes = [f"auto.routes.{tangle}=probe" for tangle in ("clean", "ambiguous", "conflicting", "mixed",
                                                           "low-coverage")]
    answer = run(llm_factory, probe_reply(lines), DOCS, *routes)
    assert answer.text == text and answer.usage.total.llm_calls == 1
    step = answer.trace.find(AutoStep)
    assert step.route == "probe" and step.passages[0].number == 1
    assert step.passages[0].answer == lines.split("\n")[0][4:].split(" |")[0]


def test_the_probe_route_makes_the_call_when_cheap_signals_decided(llm_factory):
    answer = run(llm_factory, probe_reply("[1] 1963 | basketball player"), DOCS[:1], "auto.routes.clean=probe")
    assert answer.text == "1963 (basketball player) [1]" and answer.citations == ["d0"]
    assert answer.usage.stages["probe"].llm_calls == 1 and answer.usage.total.llm_calls == 1


def test_a_reply_that_leaves_passages_out_counts_them_as_not_answering():
    per_passage = {1: PassageAnswer(answer="1963", descriptor="player")}
    assert classify(per_passage, {"passages": 3}).tangle == "clean"


def test_routes_merge_over_the_defaults_and_a_bad_route_is_a_config_error(llm_factory):
    assert Settings.load(overrides=["auto.routes.clean=separate"]).auto.routes == {**Settings().auto.routes,
                                                                                  "clean": "separate"}
    with pytest.raises(ConfigError, match="names nosuch, not a method auto can route to"):
        run(llm_factory, CannedBackend(), DOCS, "auto.routes.clean=nosuch")
    with pytest.raises(ConfigError, match="auto"):
        run(llm_factory, CannedBackend(), DOCS, "auto.routes.clean=auto")


@pytest.mark.xdist_group("spacy")  # loads the spaCy pipeline: shares the worker of the other spaCy tests
def test_entity_signals_count_the_people_the_passages_name():
    signals = entity_signals(Q.text, as_retrieved(DOCS))
    assert signals["passages_naming_a_question_entity"] == 3  # every passage names a Michael ... Jordan
    assert signals["distinct_entities"] >= 2 and signals["entities_in_several_passages"] >= 1


def test_ranking_signals_compare_dense_and_bm25_when_the_index_has_both():
    others = [Passage(id=f"x{i}", text=f"Rivers and bridges of town {i} in the valley.") for i in range(4)]
    index = PassageIndex.build(DOCS + others, HashEmbedder(), IndexConfig(bm25=True))
    dense = {h.passage.id for h in index.search(Q.text, 3, "dense")}
    sparse = {h.passage.id for h in index.search(Q.text, 3, "bm25")}
    assert ranking_signals(Q.text, index, 3) == {"dense_bm25_agreement": round(len(dense & sparse) / 3, 3)}
    assert ranking_signals(Q.text, PassageIndex.build(DOCS, HashEmbedder(), IndexConfig()), 3) == {}
    assert ranking_signals(Q.text, None, 3) == {}


def test_awaited_answer_is_the_sync_facades_the_probe_then_the_routed_method(llm_factory):
    """``aanswer`` on a loop of the test's own gives what ``answer`` gives through the portal: the probe's call, then
    the calls of the method it routed to, recorded in one order both ways."""
    lines = "[1] 1963 | basketball player\n[2] 1956 | scientist\n[3] 1963 | basketball player"
    settings = Settings.load(overrides=["auto.routes.ambiguous=separate", "auto.entity_signals=false"])

    def method():
        return make_method("auto", resources(llm_factory(probe_reply(lines), persistent=False), settings))

    hits = as_retrieved(DOCS)
    awaited, facade = asyncio.run(method().aanswer(Q, hits)), method().answer(Q, hits)
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]
    assert awaited.trace.find(AutoStep).route == "separate" and awaited.trace.calls[0].stage == "probe"
    assert len(awaited.trace.calls) == 1 + len(DOCS)  # separate asks each passage alone
