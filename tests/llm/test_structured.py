"""Decisions asked with an output schema or as text (``llm.structured``), and the backends sending the schema."""

import hashlib
import json

import httpx
import pytest
from pydantic import BaseModel

from tanglerag.errors import LLMError, StructuredOutputUnsupported
from tanglerag.llm.base import GenerationParams, Message
from tanglerag.llm.cache import cache_key
from tanglerag.llm.client import LLM
from tanglerag.llm.openai_compat import OpenAICompatBackend
from tanglerag.llm.structured import Decision
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.tracking import answering_as, stage, track


class Verdict(BaseModel):
    relevant: bool


def _decision(question: str = "Is Paris in France?") -> Decision[Verdict]:
    def read(text: str) -> Verdict | None:
        word = text.strip().lower()
        return Verdict(relevant=word == "yes") if word in {"yes", "no"} else None

    return Decision(reply=Verdict, json_messages=[Message(role="user", content=f"{question} Reply as JSON.")],
                    json_tokens=12, text_messages=[Message(role="user", content=f"{question} Reply yes or no.")],
                    text_tokens=2, parse_text=read)


def _llm(backend: CannedBackend, mode: str) -> LLM:
    return LLM(backend, structured=mode)


def test_on_sends_the_schema_and_reads_the_json_reply():
    backend = CannedBackend([("JSON", '{"relevant": true}')], default="yes", structured=True)
    with track() as tracker:
        assert _llm(backend, "on").decide(_decision()) == Verdict(relevant=True)
    messages, params = backend.requests[0]
    assert messages[-1].content.endswith("Reply as JSON.") and params.max_tokens == 12
    assert params.json_schema["properties"]["relevant"]["type"] == "boolean"
    assert tracker.calls[0].constrained is True


def test_off_sends_the_text_prompt_and_its_parser_reads_it():
    backend = CannedBackend(default="no", structured=True)
    with track() as tracker:
        assert _llm(backend, "off").decide(_decision()) == Verdict(relevant=False)
    assert backend.requests[0][1].json_schema is None and backend.requests[0][1].max_tokens == 2
    assert tracker.calls[0].constrained is False


def test_auto_falls_back_to_text_for_good_when_the_backend_refuses_schemas():
    backend = CannedBackend(default="yes")  # takes no schema, like a server without structured outputs
    llm = _llm(backend, "auto")
    with track() as tracker:
        assert llm.decide_many([_decision(), _decision("Is Rome in Spain?")]) == [Verdict(relevant=True)] * 2
        llm.decide(_decision("Is Oslo in Norway?"))
    assert all(p.json_schema is None for _, p in backend.requests)  # the refused call never reached it
    assert [c.constrained for c in tracker.calls] == [False, False, False]


def test_a_stage_can_have_its_own_mode_over_the_one_for_all():
    backend = CannedBackend([("JSON", '{"relevant": true}')], default="no", structured=True)
    llm = LLM(backend, structured="off", structured_stages={"judge": "on"})
    with track() as tracker:
        with stage("judge"):
            assert llm.decide(_decision()) == Verdict(relevant=True)
        with stage("verify"):
            assert llm.decide(_decision()) == Verdict(relevant=False)
    assert [c.constrained for c in tracker.calls] == [True, False]
    assert llm.decide(_decision("Is Rome in Spain?")) == Verdict(relevant=False)  # untracked: the mode for all


def test_a_methods_setting_for_a_stage_wins_over_the_stages_and_the_methods_own():
    """Most specific first: the method's stage, the stage, the method for all its stages, then the one for all."""
    backend = CannedBackend([("JSON", '{"relevant": true}')], default="no", structured=True)
    llm = LLM(backend, structured="on", structured_stages={"corg": {"generate": "on"}, "generate": "off",
                                                           "diva": "off", "verify": "on"})
    asked = [("corg", "generate"), ("concat", "generate"), ("diva", "verify"), ("diva", "interpret"),
             ("astute", "interpret")]
    with track() as tracker:
        for method, name in asked:
            with answering_as(method), stage(name):
                llm.decide(_decision())
    assert [c.constrained for c in tracker.calls] == [True, False, True, False, True]


@pytest.mark.parametrize("takes_schemas", [True, False])
def test_by_default_only_the_measured_steps_ask_for_json_and_fall_back_to_text(takes_schemas):
    """Measured better as JSON (docs/results/structured.md): PF+Concat's calls (not post-fusion's, which share their
    stage), COrg's multi-answer call (not concat's answer, which shares its stage), Diva's every stage, and COrg's
    graph where its text is unreadable. A backend that takes no schema gets text there too, without an error."""
    cfg = Settings().llm
    backend = CannedBackend([("JSON", '{"relevant": true}'), ("Is Rome", "maybe")], default="yes",
                            structured=takes_schemas)
    llm = LLM(backend, structured=cfg.structured, structured_stages=cfg.structured_stages)
    asked = [("pf+concat", "distill", "Is Paris in France?"), ("corg", "generate", "Is Paris in France?"),
             ("concat", "generate", "Is Paris in France?"), ("diva", "verify", "Is Paris in France?"),
             ("corg", "organize", "Is Paris in France?"), ("corg", "organize", "Is Rome in France?"),
             ("post-fusion", "post_fusion", "Is Paris in France?"), ("pf+concat", "post_fusion", "Is Paris in France?")]
    with track() as tracker:
        read = []
        for method, name, question in asked:
            with answering_as(method), stage(name):
                read.append(llm.decide(_decision(question)))
    json_read = Verdict(relevant=True) if takes_schemas else None  # the unreadable text stays unread without JSON
    assert read == [Verdict(relevant=True)] * 5 + [json_read] + [Verdict(relevant=True)] * 2
    repaired = [True] if takes_schemas else []  # organize's unreadable reply asked again as JSON
    assert [c.constrained for c in tracker.calls] == [takes_schemas, takes_schemas, False, takes_schemas, False,
                                                      False, *repaired, False, takes_schemas]


def test_on_with_a_backend_that_refuses_schemas_says_what_to_change():
    with pytest.raises(StructuredOutputUnsupported, match="llm.structured=on needs a backend"):
        _llm(CannedBackend(), "on").decide(_decision())


def test_a_reply_that_is_not_the_schemas_json_is_unreadable():
    backend = CannedBackend(default='{"relevant": "maybe"', structured=True)  # cut off, and not a boolean
    assert _llm(backend, "on").decide(_decision()) is None


class Named(BaseModel):
    name: str
    sources: list[int]


class Names(BaseModel):
    names: list[Named]


def test_a_reply_cut_off_by_its_budget_is_read_as_far_as_it_was_decoded():
    """As a text parser reads a cut-off line: the answer string so far, and the list items decoded whole."""
    short = Decision(reply=Named, json_messages=[], json_tokens=8, text_messages=[], text_tokens=8,
                     parse_text=lambda text: None)
    assert short.read_json('{"name": "Sangharsh, Kasoor, Raaz", "sources": [1, 2') == Named(
        name="Sangharsh, Kasoor, Raaz", sources=[1, 2])
    assert short.read_json('{"name": "Sangharsh, Kas') is None  # a required key never reached: unreadable
    names = Decision(reply=Names, json_messages=[], json_tokens=8, text_messages=[], text_tokens=8,
                     parse_text=lambda text: None)
    cut = '{"names": [{"name": "Mozart", "sources": [1]}, {"name": "Brahms", "sources": [2]}, {"name": "Ha'
    assert names.read_json(cut) == Names(names=[Named(name="Mozart", sources=[1]), Named(name="Brahms", sources=[2])])
    assert names.read_json('{"names": [{"name": "Ha') == Names(names=[])
    assert names.read_json('{"nam') is None


def test_the_schema_is_part_of_the_cache_key_and_absent_leaves_old_keys_alone():
    messages = [Message(role="user", content="hi")]
    plain = GenerationParams()
    constrained = plain.model_copy(update={"json_schema": Verdict.model_json_schema()})
    assert cache_key("b", "m", messages, plain) != cache_key("b", "m", messages, constrained)
    # the key of a call without a schema is computed as before schemas existed (cached runs stay valid)
    payload = {"backend": "b", "model": "m", "messages": [{"role": "user", "content": "hi"}],
               "params": {"temperature": 0.0, "max_tokens": 128, "stop": [], "n": 1, "seed": 0}}
    assert cache_key("b", "m", messages, plain) == hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _server(handler) -> OpenAICompatBackend:
    return OpenAICompatBackend("http://server/v1", "m", transport=httpx.MockTransport(handler), backoff_s=0.0)


def test_openai_backend_sends_response_format_and_a_refusal_of_it_is_recognised():
    seen = []

    def accepting(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.read()))
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"relevant": false}'}}]})

    params = GenerationParams(json_schema=Verdict.model_json_schema())
    assert _server(accepting).generate([Message(role="user", content="q")], params).texts == ['{"relevant": false}']
    assert seen[0]["response_format"] == {"type": "json_schema",
                                          "json_schema": {"name": "reply", "schema": Verdict.model_json_schema()}}

    def refusing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"message": "response_format json_schema is not supported"}})

    with pytest.raises(StructuredOutputUnsupported, match="HTTP 400"):
        _server(refusing).generate([Message(role="user", content="q")], params)
    with pytest.raises(LLMError) as plain_refusal:  # a 400 about something else is the request's own fault
        _server(lambda r: httpx.Response(400, text="max_tokens too large")).generate(
            [Message(role="user", content="q")], params)
    assert not isinstance(plain_refusal.value, StructuredOutputUnsupported)


def test_repair_keeps_readable_text_replies_and_asks_only_the_unreadable_one_again_as_json():
    backend = CannedBackend([("JSON", '{"relevant": false}'), ("Rome", "perhaps")], default="yes", structured=True)
    with track() as tracker:
        got = _llm(backend, "repair").decide_many([_decision(), _decision("Is Rome in Spain?")])
    assert got == [Verdict(relevant=True), Verdict(relevant=False)]
    assert [c.constrained for c in tracker.calls] == [False, False, True]
    assert "Rome" in backend.requests[2][0][-1].content  # the repaired question, not the readable one


def test_repair_counts_a_partly_read_reply_as_unreadable_but_not_json_notes():
    class Pair(BaseModel):
        notes: str
        first: bool
        second: bool

    assert Decision.is_whole(Pair.model_construct(None, first=True, second=False))  # notes only come in JSON
    assert not Decision.is_whole(Pair.model_construct(None, first=True))
    assert not Decision.is_whole(None)


def test_repair_keeps_text_replies_when_the_backend_refuses_schemas():
    backend = CannedBackend(default="perhaps")  # unreadable as text, and no schema taken
    llm = _llm(backend, "repair")
    assert llm.decide(_decision()) is None
    assert llm.decide(_decision("Is Oslo in Norway?")) is None
    assert [p.json_schema is None for _, p in backend.requests] == [True, True]  # refused once, then not asked
