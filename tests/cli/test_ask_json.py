"""``ask --json`` prints ``AnswerOutput``: the same bytes as before it was a model, and they read back into it."""

import json

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.outputs import AnswerOutput
from tanglerag.trace import Trace
from tanglerag.types import Answer, AnswerPart, Passage, RetrievedPassage, StageUsage, Usage

runner = CliRunner()
ANSWER = Answer(
    question="Où est-ce ?", method="pcas", text="Lisbon [1]", citations=["lis"],
    passages=[RetrievedPassage(passage=Passage(id="lis", title="Lisbon", text="Lisbon is the capital of Portugal."),
                               score=0.75, rank=0)],
    parts=[AnswerPart(answer="Lisbon", citations=["lis"])],
    usage=Usage(stages={"generate": StageUsage(llm_calls=1, prompt_tokens=40, completion_tokens=3, model_seconds=0.5,
                                               seconds=0.25)}),
    trace=Trace.model_validate({
        "calls": [{"stage": "generate", "messages": [{"role": "user", "content": "Où?"}], "replies": ["Lisbon [1]"],
                   "prompt_tokens": 40, "completion_tokens": 3, "cached": False, "model_seconds": 0.5}],
        "steps": [{"kind": "personal_context", "user": "alice", "context_id": "c1", "text": "I live in Lisbon.",
                   "score": 0.9, "lam": 0.5, "beam": 2}]}))
COST = {"llm_calls": 1, "cached_calls": 0, "prompt_tokens": 40, "completion_tokens": 3, "model_seconds": 0.5,
        "seconds": 0.25}
# what `ask --json --user alice` printed for ANSWER before the output was a model: counts stay integers
PRINTED = {"question": "Où est-ce ?", "method": "pcas", "answer": "Lisbon [1]", "citations": ["lis"],
           "passages": [{"id": "lis", "title": "Lisbon", "text": "Lisbon is the capital of Portugal.", "score": 0.75}],
           "usage": COST, "usage_by_stage": {"generate": COST},
           "parts": [{"answer": "Lisbon", "descriptor": "", "citations": ["lis"], "group": None}],
           "user": "alice", "user_context": {"id": "c1", "text": "I live in Lisbon."}}


class _Runtime:
    """Stands in for the runtime: every question gets ANSWER (no index, no model)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def answer(self, request) -> Answer:
        return ANSWER


@pytest.fixture
def ask_json(monkeypatch, tmp_path):
    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)

    def run(*flags: str) -> str:
        result = runner.invoke(app, ["ask", "Où est-ce ?", "--index", str(tmp_path), "--json", *flags,
                                     "--set", f"cache_dir={tmp_path}"])
        assert result.exit_code == 0, result.output
        return result.stdout
    return run


def test_the_printed_json_is_byte_for_byte_what_it_was(ask_json):
    assert ask_json("--user", "alice") == json.dumps(PRINTED, ensure_ascii=False, indent=2) + "\n"
    traced = json.loads(ask_json("--user", "alice", "--trace"))
    assert traced == PRINTED | {"trace": ANSWER.trace.model_dump(mode="json")}
    assert list(traced) == [*list(PRINTED)[:-2], "trace", "user", "user_context"]


def test_the_printed_json_reads_back_into_the_model_and_prints_the_same(ask_json):
    for flags in [(), ("--trace",), ("--user", "alice", "--trace")]:
        printed = ask_json(*flags)
        model = AnswerOutput.model_validate(json.loads(printed))
        assert json.dumps(model.compact(), ensure_ascii=False, indent=2) + "\n" == printed
    assert set(json.loads(printed)) == set(AnswerOutput.model_fields) - {"conflicts", "cut"}  # all but what it lacks


def test_keys_an_answer_lacks_are_left_out_not_null(ask_json):
    plain = json.loads(ask_json())
    assert set(AnswerOutput.model_fields) - set(plain) == {"conflicts", "trace", "user", "user_context", "cut"}
    bare = ANSWER.model_copy(update={"parts": [], "trace": Trace()})
    assert "parts" not in AnswerOutput.from_answer(bare).compact()
    assert AnswerOutput.from_answer(bare, "bob").compact()["user_context"] is None  # asked for a user, none fit


def test_an_answer_cut_at_its_budget_says_so_in_the_json_the_terminal_and_the_openai_finish_reason():
    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.methods.base import make_method
    from tanglerag.service.chat import _finish
    from tanglerag.service.schemas import AskResponse
    from tanglerag.settings import Settings
    from tanglerag.testing import CannedBackend
    from tanglerag.types import Passage, Question
    from tests.conftest import as_retrieved, resources

    long = "pip first tries the keyring package to look up credentials for the index, and when that " * 3
    settings = Settings.load(overrides=["methods.answer_tokens=8"])
    llm = LLM(CannedBackend(default=long), CallCache(None))
    answer = make_method("concat", resources(llm, settings)).answer(
        Question(text="How does pip use a keyring?"), as_retrieved([Passage(id="p", text="pip and keyring")]))
    assert answer.cut and answer.trace.calls[-1].cut
    output = AnswerOutput.from_answer(answer)
    assert output.compact()["cut"] is True
    assert _finish(AskResponse.from_answer(answer, None, trace=True)) == "length"
    whole = make_method("concat", resources(LLM(CannedBackend(default="keyring [1]"), CallCache(None)),
                                            settings)).answer(Question(text="q?"), as_retrieved([Passage(id="p",
                                                                                                    text="x")]))
    assert not whole.cut and "cut" not in AnswerOutput.from_answer(whole).compact()
