import asyncio

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import ConfigError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.index.trim import TrimLog, pair
from tanglerag.methods.base import Resources, make_method
from tanglerag.methods.cdit.prompts import parse_verdict, parse_verdict_lines
from tanglerag.methods.cdit.steps import CditStep
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved

Q = Question(text="Who switched on the radio in the kitchen?")
DOCS = [Passage(id="on", text="Jack switched on the radio in the kitchen."),
        Passage(id="off", text="Tom switched off the radio in the kitchen."),
        Passage(id="odd", text="The kitchen radio is a 1960s model.")]


def judge_reply(messages):
    prompt = messages[-1].content
    if not messages[0].content.startswith("You are a careful checker"):
        return "Jack [1]"  # the answering method
    if "Passages:" in prompt:  # batched judging
        return "1: True\n2: False\n3: maybe"
    if "Passage:" in prompt:
        passage = prompt.split("Passage:", 1)[1]
        return "False" if "switched off" in passage else "perhaps" if "1960s" in passage else "True."
    return "Jack [1]"


def cdit(llm_factory, overrides=(), index=None):
    backend = CannedBackend(responder=judge_reply)
    settings = Settings.load(overrides=list(overrides))
    return make_method("cdit", Resources.for_llm(llm_factory(backend), settings, embedder=HashEmbedder(),
                                                 index=index)), backend


def test_inconsistent_passages_are_dropped_and_unreadable_ones_kept(llm_factory):
    method, backend = cdit(llm_factory)
    answer = method.answer(Q, as_retrieved(DOCS))
    step = answer.trace.find(CditStep)
    assert [(j.passage_id, j.consistent) for j in step.judgments] == [("on", True), ("off", False), ("odd", None)]
    assert step.discarded == ["off"] and [p.passage.id for p in answer.passages] == ["on", "odd"]
    assert answer.text == "Jack [1]" and answer.citations == ["on"]
    assert answer.usage.stages["judge"].llm_calls == 3 and answer.usage.stages["generate"].llm_calls == 1
    judge_prompt = backend.requests[0][0]
    assert "opposite" in judge_prompt[0].content and "True or False" in judge_prompt[-1].content
    assert not step.recorded  # no index folder: nothing to trim


@pytest.mark.parametrize("batched", ["false", "true"])
def test_the_async_path_answers_as_the_sync_facade(llm_factory, batched):
    (awaiting, _), (calling, _) = (cdit(llm_factory, [f"cdit.batched={batched}"]) for _ in range(2))
    awaited = asyncio.run(awaiting.aanswer(Q, as_retrieved(DOCS)))  # two methods: the determiner remembers
    facade = calling.answer(Q, as_retrieved(DOCS))
    assert (awaited.text, awaited.citations, awaited.passages) == (facade.text, facade.citations, facade.passages)
    assert awaited.trace.find(CditStep) == facade.trace.find(CditStep)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]


def json_judge_reply(messages):
    """The judge constrained to JSON: a key per passage when batched, one verdict otherwise."""
    prompt = messages[-1].content
    if "Passages:" in prompt:
        return '{"passage_1": true, "passage_2": false, "passage_3": true}'
    if "Passage:" in prompt:
        return '{"match": %s}' % ("false" if "switched off" in prompt.split("Passage:", 1)[1] else "true")
    return judge_reply(messages)


@pytest.mark.parametrize("batched", ["false", "true"])
def test_a_judge_constrained_to_json_reads_every_verdict(llm_factory, batched):
    llm = llm_factory(CannedBackend(responder=json_judge_reply, structured=True))
    llm.structured = "on"
    method = make_method("cdit", Resources.for_llm(llm, Settings.load(overrides=[f"cdit.batched={batched}"]),
                                                   embedder=HashEmbedder()))
    answer = method.answer(Q, as_retrieved(DOCS))
    step = answer.trace.find(CditStep)
    assert [(j.passage_id, j.consistent) for j in step.judgments] == [("on", True), ("off", False), ("odd", True)]
    judged = [c for c in answer.trace.calls if c.stage == "judge"]
    assert judged and all(c.constrained for c in judged)
    assert len(judged) == (1 if batched == "true" else 3)


def test_phi2_adds_the_modifiers_rule_and_batching_uses_one_call(llm_factory):
    method, backend = cdit(llm_factory, ["cdit.cmd=phi1+phi2", "cdit.batched=true"])
    answer = method.answer(Q, as_retrieved(DOCS))
    assert "adverbials" in backend.requests[0][0][0].content
    assert answer.usage.stages["judge"].llm_calls == 1
    assert answer.trace.find(CditStep).discarded == ["off"]


def test_witnesses_go_to_the_index_trim_log_and_separate_at_k(llm_factory, tmp_path):
    embedder = HashEmbedder()
    store_passages(tmp_path / "idx", DOCS, embedder, IndexConfig())
    index = PassageIndex.load(tmp_path / "idx", embedder)
    method, _ = cdit(llm_factory, ["cdit.witnesses=1"], index=index)
    step = method.answer(Q, index.search(Q.text, 3)).trace.find(CditStep)
    assert step.recorded and step.witnesses_added == 1 and step.separated_now == [pair("on", "off")]
    assert TrimLog(tmp_path / "idx").state().is_separated("on", "off")
    ids = [h.passage.id for h in index.search(Q.text, 3)]
    assert "on" in ids and "off" not in ids  # this process sees the separation at once


def test_cdit_cannot_wrap_itself(llm_factory):
    with pytest.raises(ConfigError, match="another method"):
        cdit(llm_factory, ["cdit.answer_method=cdit"])


def test_verdict_parsing():
    assert parse_verdict("True.") is True and parse_verdict("false") is False and parse_verdict("Yes") is True
    assert parse_verdict("It depends") is None
    assert parse_verdict_lines("1: True\n[2] - False\nthree: True", 3) == [True, False, None]


@pytest.mark.xdist_group("spacy")  # loads the spaCy pipeline: shares the worker of the other spaCy tests
def test_the_spacy_judge_needs_no_llm_call(llm_factory):
    method, backend = cdit(llm_factory, ["cdit.judge=spacy", "cdit.spacy_threshold=0.95"])
    answer = method.answer(Q, as_retrieved(DOCS))
    assert answer.trace.find(CditStep).discarded == ["off", "odd"]  # "odd" has no switching at all
    assert "judge" in answer.usage.stages and answer.usage.stages["judge"].llm_calls == 0
    assert len(backend.requests) == 1  # the answer only


def test_the_determiner_reuses_verdicts_of_a_close_query_and_remembers_them_in_the_index(llm_factory, tmp_path):
    embedder = HashEmbedder()
    store_passages(tmp_path / "idx", DOCS, embedder, IndexConfig())
    index = PassageIndex.load(tmp_path / "idx", embedder)
    method, backend = cdit(llm_factory, ["cdit.witnesses=5"], index=index)
    hits = as_retrieved(DOCS)
    first = method.answer(Q, hits)
    assert first.usage.stages["judge"].llm_calls == 3 and first.trace.find(CditStep).recorded
    again, _ = cdit(llm_factory, ["cdit.witnesses=5"], index=PassageIndex.load(tmp_path / "idx", embedder))
    second = again.answer(Q, hits[:2] + [as_retrieved([Passage(id="new", text="Ann switched on a radio.")])[0]])
    step = second.trace.find(CditStep)
    assert step.reused_from == Q.text and step.reused == 2  # "on" and "off" known; "new" judged now
    assert second.usage.stages["judge"].llm_calls + second.usage.stages["judge"].cached_calls == 1
    assert step.discarded == ["off"] and not step.recorded  # a recalled query is not a new witness
    assert TrimLog(tmp_path / "idx").state().witnesses == {pair("on", "off"): 1}
    other = again.answer(Question(text="What model is the kitchen radio?"), hits).trace.find(CditStep)
    assert other.reused_from is None


def test_an_evaluation_over_an_index_folder_leaves_witnesses_there(tmp_path):
    from tanglerag.datasets.base import QAExample
    from tanglerag.eval.runner import EvalRunner
    from tanglerag.runtime import Runtime
    from tanglerag.testing import canned_llm

    embedder = HashEmbedder()
    store_passages(tmp_path / "idx", DOCS, embedder, IndexConfig())
    examples = [QAExample(id="q1", question=Q.text, answers=["Jack"], passages=DOCS)]
    settings = Settings.load(overrides=["eval.passage_scope=pooled", "retrieval.top_k=3", "cdit.witnesses=1"])
    runtime = Runtime(settings, index_dir=tmp_path / "idx", llm=canned_llm(responder=judge_reply), embedder=embedder)
    report, predictions = EvalRunner(runtime).run("toy", examples, ["concat", "cdit"])
    assert {r.method: r.metrics["accuracy"] for r in report.results} == {"concat": 1.0, "cdit": 1.0}
    assert TrimLog(tmp_path / "idx").state().is_separated("on", "off")
    cdit_row = next(p for p in predictions if p.method == "cdit")
    assert "off" not in cdit_row.passage_ids and cdit_row.trace.find(CditStep).recorded
