"""Conflict reports over HTTP: ``/v1/ask``'s typed ``conflicts`` (per request with the ``conflicts.report`` option, a
cost a user key may not raise), and the chat reply's "Sources disagree" sentence, plain and streamed."""

import json

import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.service.auth import ApiKeys
from tests.conflicting import JORDAN, QUESTION, conflicting_backend
from tests.service.conftest import ADMIN, ALICE, bearer, client_for, make_runtime

SAID = "Sources disagree: 1963 (2 sources) vs 1998 (1 source, rejected: fewer independent sources (1 against 2))."


def runtime(tmp_path, *overrides: str):
    made = make_runtime(tmp_path, with_index=False, backend=conflicting_backend(), overrides=list(overrides))
    store_passages(made.index_dir, JORDAN, made.embedder, made.settings.index)
    return made


@pytest.fixture
def keyed(tmp_path):
    with client_for(runtime(tmp_path), ApiKeys.load(env=f"{ADMIN},{ALICE}=alice")) as client:
        yield client


@pytest.fixture
def reporting(tmp_path):
    """A server whose operator turned the report on for every answer."""
    with client_for(runtime(tmp_path, "conflicts.report=true")) as client:
        yield client


def test_ask_reports_when_the_option_asks_and_a_user_key_may_not_ask(keyed):
    def ask(key: str, **options):
        return keyed.post("/v1/ask", json={"question": QUESTION, "options": options}, headers=bearer(key))

    plain = ask(ADMIN).json()
    assert plain["conflicts"] == [] and "conflicts" not in plain["usage_by_stage"]
    reported = ask(ADMIN, **{"conflicts.report": True}).json()
    [report] = reported["conflicts"]
    assert report["kind"] == "misinformation" and report["rule"] == "witnesses 2 vs 1"
    assert {s["answer"]: (s["verdict"], sorted(s["passages"])) for s in report["sides"]} == {
        "1963": ("kept", ["bio", "bulls"]), "1998": ("rejected", ["fan"])}
    assert reported["answer"] == plain["answer"] and reported["usage_by_stage"]["conflicts"]["llm_calls"] == 3
    denied = ask(ALICE, **{"conflicts.report": True})
    assert denied.status_code == 403 and denied.json()["error"].startswith("option conflicts.report: ")
    assert ask(ALICE, **{"conflicts.report": False}).status_code == 200


def test_chat_says_where_sources_disagree_after_the_answer(reporting):
    body = {"model": "tanglerag/concat", "messages": [{"role": "user", "content": QUESTION}]}
    reply = reporting.post("/v1/chat/completions", json=body).json()
    content = reply["choices"][0]["message"]["content"]
    assert content.startswith(f"1963 [1][2]\n\n{SAID}\n\nSources:\n[1] ")
    assert reply["tanglerag"]["conflicts"][0]["kind"] == "misinformation"
    with reporting.stream("POST", "/v1/chat/completions", json=body | {"stream": True}) as streamed:
        events = [json.loads(line[6:]) for line in streamed.read().decode().splitlines()
                  if line.startswith("data: {")]
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events if e["choices"]) == content


def test_chat_without_a_disagreement_has_no_sentence(tmp_path):
    with client_for(runtime(tmp_path)) as client:  # the report is off: nothing to say
        reply = client.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
            {"role": "user", "content": QUESTION}]}).json()
    assert "disagree" not in reply["choices"][0]["message"]["content"]
    assert reply["tanglerag"]["conflicts"] == []
