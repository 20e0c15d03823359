import asyncio

from tanglerag.methods.corg.plural import plural_by_llm, plural_by_rule
from tanglerag.testing import CannedBackend
from tanglerag.tracking import track


def test_rules():
    assert plural_by_rule("What sport is Bobby Carpenter associated with?") == \
        "What sports are Bobby Carpenter associated with?"
    assert plural_by_rule("What is the population of Broken Bow?") == "What are the populations of Broken Bow?"
    assert plural_by_rule("Who is the director of X?") == "Who are the directors of X?"
    assert plural_by_rule("When was Ryan Davis born?") == "When were all the Ryan Davis born?"
    # names after "the" stay whole; an adjective before the head noun stays singular
    assert plural_by_rule("When was the Zook House built?") == "When were all the Zook House built?"
    assert plural_by_rule("Who is the current Minister of Immigration?") == \
        "Who are the current Ministers of Immigration?"
    assert plural_by_rule("What is the median age in Riceville?") == "What are the median ages in Riceville?"
    assert plural_by_rule("Who is the band associated with the album X?") == \
        "Who are the bands associated with the album X?"
    assert plural_by_rule("Name the author of Dune") == "Name the author of Dune? Give all the answers."


def test_llm_rewrite_with_rule_fallback(llm_factory):
    llm = llm_factory(CannedBackend(default="What sports are the Bobby Carpenters associated with?"))
    with track() as tracker:
        rewritten = asyncio.run(plural_by_llm(llm, "What sport is Bobby Carpenter associated with?"))
        assert rewritten.startswith("What sports")
    assert tracker.usage.total.llm_calls == 1
    llm = llm_factory(CannedBackend(default="sure"))
    assert asyncio.run(plural_by_llm(llm, "Who is the director of X?")) == "Who are the directors of X?"


def test_llm_rewrite_as_json_keeps_the_rule_fallback_and_sends_no_stop_string(llm_factory):
    backend = CannedBackend([("Bobby", '{"question": "What sports are the Bobby Carpenters associated with?"}')],
                            default='{"question": "directors"}', structured=True)
    llm = llm_factory(backend)
    llm.structured = "on"
    rewritten = asyncio.run(plural_by_llm(llm, "What sport is Bobby Carpenter associated with?"))
    assert rewritten.startswith("What sports")
    # the model's reply is not a question: the rules' rewrite stands
    assert asyncio.run(plural_by_llm(llm, "Who is the director of X?")) == "Who are the directors of X?"
    assert all(params.stop == () and params.json_schema for _, params in backend.requests)
