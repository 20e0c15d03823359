import asyncio
import re
from pathlib import Path

import pytest

from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.methods.base import Resources, make_method
from tanglerag.methods.diva.demos import DemoPool
from tanglerag.methods.diva.methods import grade
from tanglerag.methods.diva.prompts import parse_interpretations, parse_long_answer, parse_yes_no_lines
from tanglerag.methods.diva.steps import ClarificationTreeStep, DivaStep
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import IndexRetriever
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage, Question

Q = Question(text="Who has the highest goals in world football?")
DOCS = [Passage(id="men", title="Ali Daei", text="Ali Daei scored the most goals in men's international football."),
        Passage(id="women", title="Christine Sinclair",
                text="Christine Sinclair scored the most goals in women's international football."),
        Passage(id="club", title="Josef Bican", text="Josef Bican scored the most goals of all time in football."),
        Passage(id="tennis", title="Tennis", text="Roger Federer won many tennis titles at Wimbledon.")]
INTERPRETATIONS = "1: Who scored the most goals in men's football? \n2: Who scored the most goals in women's football?"


def responder(verify: str = "1: yes\n2: no", interpretations: str = INTERPRETATIONS):
    def respond(messages):
        system, prompt = messages[0].content, messages[-1].content
        if system.startswith("A question can be ambiguous"):
            return "Reason: 'who' may mean a man or a woman.\nTypes: subject"
        if system.startswith("You rewrite"):
            return interpretations
        if system.startswith("You check whether numbered passages contain the answer to each"):
            return verify
        if system.startswith("You check"):
            return "yes" if "men's" in prompt.rsplit("Question:", 1)[-1] and "women" not in prompt.rsplit(
                "Question:", 1)[-1] else "no"
        if system.startswith("You read passages about an ambiguous"):
            node = prompt.rsplit("Question:", 1)[-1]
            return "" if "men's" in node else "1: Who scored most for men? -> Ali Daei [1]\n2: Who scored most for women? -> Sinclair [2]"
        if "Passages:" in prompt:
            return ("1: Who scored most in men's football? -> Ali Daei [1]\n"
                    "2: Who scored most in women's football? -> Christine Sinclair [2]\n"
                    "Answer: It depends on the division. Ali Daei leads the men [1]. Christine Sinclair leads the "
                    "women [2].")
        return "1: men? -> Ali Daei\nAnswer: Ali Daei scored the most goals, from memory."
    return CannedBackend(responder=respond)


def _method(name, llm_factory, backend, overrides=(), with_index=True):
    embedder = HashEmbedder()
    settings = Settings.load(None, ["diva.top_k=2", *overrides])
    index = PassageIndex.build(DOCS, embedder, settings.index) if with_index else None
    resources = Resources.for_llm(llm_factory(backend), settings, embedder=embedder,
                                  retriever=IndexRetriever(index, settings.retrieval) if index else None, index=index)
    hits = index.search(Q.text, 2) if index else []
    return make_method(name, resources), hits


def test_diva_diversifies_verifies_and_answers_from_the_kept_passages(llm_factory):
    backend = responder()
    method, hits = _method("diva", llm_factory, backend)
    answer = method.answer(Q, hits)
    step = answer.trace.find(DivaStep)
    assert step.ambiguity_types == ["subject"] and len(step.interpretations) == 2 and not step.interpretation_fallback
    assert [r.query for r in step.retrievals] == [Q.text, *step.interpretations]
    assert len(step.kept) == 2 and [p.passage.id for p in answer.passages] == [k.passage_id for k in step.kept]
    assert step.verification_mode == "batched" and [v.covered for v in step.verification] == [True, False]
    assert step.grade == "PartialUseful" and step.mode == "rag"
    assert answer.text.startswith("It depends on the division.") and "Ali Daei leads the men [1]" in answer.text
    assert answer.citations == [answer.passages[0].passage.id, answer.passages[1].passage.id]
    assert [p.answer for p in answer.parts] == ["Ali Daei", "Christine Sinclair"]
    assert set(answer.usage.stages) >= {"interpret", "retrieve", "verify", "generate"}
    assert answer.usage.total.llm_calls == 4  # type, interpretations, one batched verification, the answer


@pytest.mark.parametrize("name", ["diva", "toc"])
def test_the_async_path_answers_as_the_sync_facade(llm_factory, name):
    method, hits = _method(name, llm_factory, responder(), ["diva.toc_nodes=3"])
    awaited = asyncio.run(method.aanswer(Q, hits))
    facade = method.answer(Q, hits)
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]
    assert awaited.trace.steps == facade.trace.steps


def test_useless_retrieval_falls_back_to_closed_book(llm_factory):
    backend = responder(verify="1: no\n2: no")
    method, hits = _method("diva", llm_factory, backend)
    answer = method.answer(Q, hits)
    step = answer.trace.find(DivaStep)
    assert step.grade == "Useless" and step.mode == "closed-book" and answer.passages == []
    assert "Passages:" not in backend.requests[-1][0][-1].content and answer.text.startswith("Ali Daei scored")


def test_verification_one_call_per_interpretation(llm_factory):
    method, hits = _method("diva", llm_factory, responder(), ["diva.verification=each"])
    answer = method.answer(Q, hits)
    assert answer.usage.stages["verify"].llm_calls == 2
    assert [v.covered for v in answer.trace.find(DivaStep).verification] == [True, False]


def test_unreadable_interpretations_mean_unambiguous_and_no_passages_never_crash(llm_factory):
    method, hits = _method("diva", llm_factory, responder(interpretations="I am not sure."))
    step = method.answer(Q, hits).trace.find(DivaStep)
    assert step.interpretation_fallback and step.interpretations == [Q.text]
    assert step.unreadable == 1  # the interpretations; the ambiguity and the one verdict were read
    method, _ = _method("diva", llm_factory, responder(), with_index=False)
    answer = method.answer(Q, [])  # nothing retrievable: Useless -> closed-book
    assert answer.trace.find(DivaStep).grade == "Useless" and not answer.is_unknown


def test_baselines_calls_and_prompts(llm_factory):
    backend = responder()
    closed, hits = _method("closed-book", llm_factory, backend)
    assert closed.answer(Q, hits).usage.total.llm_calls == 1 and "Passages:" not in backend.requests[-1][0][-1].content
    refine, _ = _method("query-refinement", llm_factory, responder())
    refined = refine.answer(Q, hits)
    assert refined.usage.total.llm_calls == 2 and refined.passages == []
    vanilla_backend = responder()
    vanilla, _ = _method("vanilla-rag", llm_factory, vanilla_backend)
    answer = vanilla.answer(Q, hits)
    assert answer.usage.total.llm_calls == 1 and [p.passage.id for p in answer.passages] == [h.passage.id for h in hits]
    rd, _ = _method("diva-rd", llm_factory, responder())
    assert "verify" not in rd.answer(Q, hits).usage.stages


def test_toc_expands_a_bounded_tree_breadth_first(llm_factory):
    method, hits = _method("toc", llm_factory, responder(), ["diva.toc_nodes=3"])
    answer = method.answer(Q, hits)
    tree = answer.trace.find(ClarificationTreeStep)
    assert tree.expansions == 3 and answer.usage.stages["clarify"].llm_calls == 3
    assert [n.depth for n in tree.nodes[:2]] == [1, 1] and tree.nodes[0].parent is None
    assert all(n.depth <= 3 for n in tree.nodes)
    assert "Possible readings:" in answer.trace.calls[-1].messages[-1].content


def json_responder():
    """The same worlds as ``responder``, replying as a model constrained to each step's schema would."""
    def respond(messages):
        system, prompt = messages[0].content, messages[-1].content
        if system.startswith("A question can be ambiguous"):
            return '{"reason": "who may mean a man or a woman", "types": ["subject", "none"]}'
        if system.startswith("You rewrite"):
            return '{"questions": ["Who scored the most goals in men\'s football?", "Q?", "Who scored the most goals in women\'s football?"]}'
        if system.startswith("You check whether numbered passages contain the answer to each"):
            return '{"question_1": true, "question_2": false}'
        if system.startswith("You check"):
            return '{"contains_answer": %s}' % ("true" if "women" not in prompt.rsplit("Question:", 1)[-1] else "false")
        if system.startswith("You read passages about an ambiguous"):
            return '{"readings": [{"question": "Who scored most for men?", "answer": "Ali Daei"}]}'
        return "1: men? -> Ali Daei\nAnswer: Ali Daei scored the most goals [1]."
    return CannedBackend(responder=respond, structured=True)


@pytest.mark.parametrize("verification", ["batched", "each"])
def test_diva_steps_as_json_read_the_same_decisions(llm_factory, verification):
    backend = json_responder()
    method, hits = _method("diva", llm_factory, backend, [f"diva.verification={verification}"])
    method.llm.structured = "on"
    answer = method.answer(Q, hits)
    step = answer.trace.find(DivaStep)
    assert step.ambiguity_types == ["subject"] and step.reason == "who may mean a man or a woman"
    assert len(step.interpretations) == 2 and not step.interpretation_fallback  # "Q?" is too short to keep
    assert [v.covered for v in step.verification] == [True, False] and step.grade == "PartialUseful"
    assert step.unreadable == 0
    constrained = [c.constrained for c in answer.trace.calls]
    assert constrained[-1] is False and all(constrained[:-1])  # the long answer stays free text


def test_toc_clarifications_as_json(llm_factory):
    method, hits = _method("toc", llm_factory, json_responder(), ["diva.toc_nodes=2"])
    method.llm.structured = "on"
    tree = method.answer(Q, hits).trace.find(ClarificationTreeStep)
    assert [(n.question, n.answer) for n in tree.nodes] == [("Who scored most for men?", "Ali Daei")]


def test_parsers_are_lenient():
    assert parse_interpretations("1: Who is A?\n2) who is a\n- Who is B\nQ?", "Q?", 5) == ["Who is A?", "Who is B?"]
    assert parse_yes_no_lines("1: Yes.\n3: no\nnonsense", 3) == [True, None, False]
    interpretations, paragraph = parse_long_answer("1: A? -> x [1]\nn: B? -> y\nAnswer: One.\nTwo.")
    assert interpretations == [("A?", "x [1]"), ("B?", "y")] and paragraph == "One. Two."  # a copied 'n:' still reads
    assert grade([True, True]) == "Useful" and grade([True, None]) == "PartialUseful" and grade([None]) == "Useless"


def test_demo_pool_picks_nearest_other_questions():
    pool = DemoPool.from_file(pytest.importorskip("importlib.resources").files("tanglerag") / "sample_data" /
                              "asqa_sample.jsonl", HashEmbedder())
    question = pool.demos[0].question
    chosen = pool.nearest(question, 2)
    assert len(chosen) == 2 and question not in [d.question for d in chosen]
    assert all(d.interpretations and d.long_answer for d in chosen)


def test_diva_uses_demos_when_asked(llm_factory):
    from importlib.resources import files

    pool = str(files("tanglerag") / "sample_data" / "asqa_sample.jsonl")
    method, hits = _method("diva", llm_factory, responder(), ["diva.demos=2", f"diva.demo_pool={pool}"])
    answer = method.answer(Q, hits)
    demos = answer.trace.find(DivaStep).demos
    assert len(demos) == 2
    interpretation_prompt = next(c for c in answer.trace.calls if c.stage == "interpret" and "Examples:" in
                                 c.messages[-1].content).messages[-1].content
    assert all(re.escape(d) and d in interpretation_prompt for d in demos)


def test_oracle_retrieves_with_the_gold_interpretations_and_needs_them(llm_factory):
    backend = responder()
    method, hits = _method("diva-oracle", llm_factory, backend)
    gold = ["Who scored the most goals in women's international football?", "Who scored the most goals of all time?"]
    answer = method.answer(Q.model_copy(update={"interpretations": gold}), hits)
    step = answer.trace.find(DivaStep)
    assert step.interpretations == gold and [r.query for r in step.retrievals] == [Q.text, *gold]
    assert answer.usage.total.llm_calls == 1  # no interpretation, no verification: the answer only
    assert "Passages:" in backend.requests[-1][0][-1].content
    with pytest.raises(InputError, match="gold interpretations"):
        method.answer(Q, hits)


def test_the_runner_hands_gold_interpretations_to_oracles_only(tmp_path):
    from tanglerag.datasets.asqa import load
    from tanglerag.eval.runner import EvalRunner
    from tanglerag.runtime import Runtime
    from tanglerag.testing import canned_llm

    examples = load(Path(__file__).parents[2] / "src/tanglerag/sample_data/asqa_sample.jsonl")[:2]
    assert all(ex.interpretations for ex in examples)
    settings = Settings.load(None, ["eval.passage_scope=pooled", "diva.top_k=2", "retrieval.top_k=2"])
    llm = canned_llm(default="1: q -> a\nAnswer: a.")
    runtime = Runtime(settings, llm=llm, embedder=HashEmbedder())
    _, predictions = EvalRunner(runtime, metrics=["rouge_l"]).run("asqa-sample", examples, ["diva-oracle", "diva-rd"])
    oracle = [p for p in predictions if p.method == "diva-oracle"]
    assert [p.trace.find(DivaStep).interpretations for p in oracle] == [ex.interpretations for ex in examples]
    rd_prompts = [c.messages[-1].content for p in predictions if p.method == "diva-rd" for c in p.trace.calls]
    assert not any(ex.interpretations[0] in prompt for ex in examples for prompt in rd_prompts)
