import asyncio

import pytest
from pydantic import ValidationError

from tanglerag.llm.client import LLM
from tanglerag.methods.corg.multi_answer import ask_group
from tanglerag.stages.multi_answer import parts_reply
from tanglerag.testing import CannedBackend
from tests.stages.test_multi_answer import hits


def test_ask_group_as_json_bounds_citations_to_the_contexts_shown():
    reply = ('{"answers": [{"answer": "Mahesh Bhatt", "about": "1979 film", "contexts": [1, 2]}, '
             '{"answer": "unknown", "about": "", "contexts": []}]}')
    backend = CannedBackend([("Reply with JSON", reply)], structured=True)
    llm = LLM(backend, structured="on")
    parts = asyncio.run(ask_group(llm, "Who directed Lahu Ke Do Rang?", hits(2), 0, 64, None))
    assert [(p.answer, p.descriptor, p.citations) for p in parts] == [("Mahesh Bhatt", "1979 film", ["d0", "d1"])]
    schema = backend.requests[0][1].json_schema
    contexts = schema["$defs"]["BoundedPart"]["properties"]["contexts"]
    assert (contexts["items"]["minimum"], contexts["items"]["maximum"]) == (1, 2)
    with pytest.raises(ValidationError):  # what the grammar rules out, the reply model refuses too
        parts_reply(2).model_validate_json('{"answers": [{"answer": "x", "about": "", "contexts": [3]}]}')


def test_ask_group_in_repair_mode_keeps_a_text_reply_its_lenient_parser_reads():
    backend = CannedBackend([("Reply with JSON", '{"answers": []}'), ("Answers:", "Mahesh Bhatt | 1979 film | [1]")],
                            structured=True)
    parts = asyncio.run(ask_group(LLM(backend, structured="repair"), "Who directed it?", hits(1), None, 64, None))
    assert [p.answer for p in parts] == ["Mahesh Bhatt"] and len(backend.requests) == 1


def test_a_constrained_reply_abstains_with_an_unknown_entry_not_an_empty_list():
    with pytest.raises(ValidationError):  # the grammar's shortest path, which the 1.5B model took, is ruled out
        parts_reply(2).model_validate_json('{"answers": []}')
    backend = CannedBackend([("Reply with JSON", '{"answers": [{"answer": "unknown", "about": "", "contexts": []}]}')],
                            structured=True)
    assert asyncio.run(ask_group(LLM(backend, structured="on"), "Who directed it?", hits(2), None, 64, None)) == []
    assert backend.requests[0][1].json_schema["properties"]["answers"]["minItems"] == 1
