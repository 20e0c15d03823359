import asyncio
import json
import re

import pytest

from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.constructor import GraphConstructor
from tanglerag.methods.corg.graph import Relation
from tanglerag.testing import CannedBackend
from tanglerag.tracking import track
from tanglerag.types import Passage, RetrievedPassage

TEXTS = ["Lahu Ke Do Rang (1979 film) was directed by Mahesh Bhatt.",
         "The 1979 film Lahu Ke Do Rang, directed by Mahesh Bhatt.",
         "Lahu Ke Do Rang (1979 film) was directed by Raj Kapoor.",
         "Lahu Ke Do Rang (1997 film) was directed by Shibu Mitra.",
         "Lahu Ke Do Rang is a Hindi title."]


def hits(n=None):
    return [RetrievedPassage(passage=Passage(id=f"d{i}", text=t), score=1.0, rank=i + 1)
            for i, t in enumerate(TEXTS[:n])]


def pairwise_judge(truth):
    """Answers relation requests from a table of true relations (0-based pairs), as lines or, asked so, JSON."""
    def respond(messages):
        task = messages[-1].content.rsplit("Contexts:", 1)[-1]
        focal = int(re.search(r"from context \[(\d+)\]", task).group(1)) - 1
        listed = re.search(r"each of the contexts ((?:\[\d+\](?:, )?)+)", task).group(1)
        asked = [int(n) - 1 for n in re.findall(r"\d+", listed)]
        if "Reply with JSON" in task:
            return json.dumps({"notes": "each context's film, year and director",
                               **{f"context_{o + 1}": truth[frozenset((focal, o))].value for o in asked}})
        return "\n".join(f"[{o + 1}] - {truth[frozenset((focal, o))].value}" for o in asked)
    return respond


@pytest.mark.parametrize("structured", ["off", "on"])
def test_pairwise_mirrors_counterfactual_and_duplicate_edges(llm_factory, structured):
    truth = {frozenset(p): r for p, r in {
        (0, 1): Relation.DUPLICATED, (0, 2): Relation.COUNTERFACTUAL, (0, 3): Relation.DISTRACTING,
        (0, 4): Relation.AMBIGUOUS, (3, 4): Relation.NONE}.items()}
    backend = CannedBackend(responder=pairwise_judge(truth), structured=structured == "on")
    llm = llm_factory(backend)
    llm.structured = structured
    with track() as tracker:
        graph = asyncio.run(GraphConstructor(llm, CorgConfig(graph="pairwise"), 100).build("Who directed it?", hits()))
    assert all(call.constrained is (structured == "on") for call in tracker.calls)
    if structured == "on":  # every other context is a required key of the schema
        schema = backend.requests[0][1].json_schema
        assert schema["required"] == ["notes", "context_2", "context_3", "context_4", "context_5"]
        assert list(schema["properties"])[0] == "notes"  # decoded first: the labels follow the notes
        assert set(schema["$defs"]["Relation"]["enum"]) == {r.value for r in Relation}
    assert len(backend.requests) == 2  # focal 0, then focal 3 against 4
    assert graph.pairs_judged == 5 and graph.pairs_total == 10
    assert graph.relation(1, 2) is Relation.COUNTERFACTUAL  # 1 mirrors 0, and 0-2 is counterfactual
    assert graph.relation(2, 3) is Relation.DISTRACTING and graph.relation(1, 4) is Relation.AMBIGUOUS
    assert graph.relation(3, 4) is Relation.NONE
    assert graph.graph.number_of_edges() == 10
    assert tracker.usage.stages["organize"].llm_calls == 2
    # every call shows all contexts first: they share one prompt prefix
    first, second = (m[-1].content for m, _ in backend.requests)
    assert first.split("Question:")[0] == second.split("Question:")[0]


def test_pairwise_unreadable_reply_means_none(llm_factory):
    constructor = GraphConstructor(llm_factory(CannedBackend(default="I am not sure.")), CorgConfig(), 100)
    graph = asyncio.run(constructor.build("q?", hits(3)))
    assert graph.unparsed == 3
    assert {graph.relation(0, 1), graph.relation(1, 2)} == {Relation.NONE}


def test_pairwise_json_cut_off_by_the_token_budget_counts_as_unparsed(llm_factory):
    backend = CannedBackend(default='{"context_2": "none", "context_3": "dupl', structured=True)
    llm = llm_factory(backend)
    llm.structured = "on"
    graph = asyncio.run(GraphConstructor(llm, CorgConfig(), 100).build("q?", hits(3)))
    assert graph.unparsed == 3 and graph.relation(0, 1) is Relation.NONE


def test_extract_mode_reads_json_replies(llm_factory):
    def reply(messages):
        director = re.search(r"directed by ([A-Z][a-z]+ [A-Z][a-z]+)", messages[-1].content)
        year = re.search(r"\((\d{4}) film\)|The (\d{4}) film", messages[-1].content)
        return json.dumps({"entity": "Lahu Ke Do Rang", "descriptor": f"{next(filter(None, year.groups()))} film"
                           if year else "none", "answer": director.group(1) if director else "unknown"})

    llm = llm_factory(CannedBackend(responder=reply, structured=True))
    llm.structured = "auto"
    graph = asyncio.run(GraphConstructor(llm, CorgConfig(graph="extract"), 100).build("Who directed it?", hits()))
    assert graph.unparsed == 0 and graph.relation(0, 1) is Relation.DUPLICATED
    assert graph.relation(0, 2) is Relation.COUNTERFACTUAL and graph.relation(0, 3) is Relation.DISTRACTING
    assert graph.relation(0, 4) is Relation.NONE and graph.has_descriptor(4) is False


def test_extract_mode_is_one_call_per_context(llm_factory):
    rules = [("Mahesh Bhatt", "Entity: Lahu Ke Do Rang\nDescriptor: 1979 film\nAnswer: Mahesh Bhatt"),
             ("Raj Kapoor", "Entity: Lahu Ke Do Rang\nDescriptor: 1979 film\nAnswer: Raj Kapoor"),
             ("Shibu Mitra", "Entity: Lahu Ke Do Rang\nDescriptor: 1997 film\nAnswer: Shibu Mitra"),
             ("Hindi title", "Entity: Lahu Ke Do Rang\nDescriptor: none\nAnswer: unknown")]
    backend = CannedBackend(rules)
    constructor = GraphConstructor(llm_factory(backend), CorgConfig(graph="extract"), 100)
    graph = asyncio.run(constructor.build("Who directed it?", hits()))
    assert len(backend.requests) == 5 and graph.pairs_judged == 10
    assert graph.relation(0, 1) is Relation.DUPLICATED and graph.relation(0, 2) is Relation.COUNTERFACTUAL
    assert graph.relation(0, 3) is Relation.DISTRACTING and graph.relation(0, 4) is Relation.NONE
    assert graph.graph.nodes[3]["descriptor"] == "1997 film" and graph.has_descriptor(4) is False
