"""Graph constructor: label every pair of contexts with a relation, in one of two modes.

``pairwise`` follows the paper's Algorithm 1: a focal context is compared with the contexts
still unresolved in one call; a context found counterfactual or duplicated to the focal one
copies the focal one's edges, so its own pairs need no call. ``extract`` (ours) makes one call
per context for (entity, descriptor, answer) and derives every relation by rule: O(n) calls.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision, numbered_reply, numbered_values, partly_numbered
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.graph import (
    MIRRORED,
    ContextGraph,
    ExtractedReply,
    Extraction,
    Relation,
    extraction_of,
    parse_relations,
    read_extraction_lines,
    relation_between,
)
from tanglerag.methods.corg.prompts import extract_messages, relation_messages
from tanglerag.text import number_passages
from tanglerag.tracking import stage
from tanglerag.types import RetrievedPassage

NOTES_CHARS = 400  # the notes a JSON relation reply starts with (about 130 tokens)


class GraphConstructor:
    def __init__(self, llm: LLM, config: CorgConfig, passage_words: int | None) -> None:
        self.llm = llm
        self.config = config
        self.passage_words = passage_words

    async def build(self, question: str, passages: list[RetrievedPassage]) -> ContextGraph:
        graph = ContextGraph.empty([p.passage.id for p in passages], self.config.graph)
        with stage("organize"):
            if self.config.graph == "pairwise":
                await self._pairwise(question, passages, graph)
            else:
                await self._extract(question, passages, graph)
        return graph

    async def _pairwise(self, question: str, passages: list[RetrievedPassage], graph: ContextGraph) -> None:
        block = number_passages(passages, self.passage_words, title_sep=None)
        remaining = list(range(len(passages)))
        while len(remaining) > 1:
            focal, others = remaining[0], remaining[1:]
            numbers = [o + 1 for o in others]
            reply = await self.llm.adecide(_relations(question, block, focal + 1, numbers))
            found = numbered_values(reply, "context", numbers)
            graph.unparsed += len(numbers) - len(found)
            relations = {o: found.get(o + 1, Relation.NONE) for o in others}  # unreadable: assume unrelated
            for other, relation in relations.items():
                graph.set(focal, other, relation, "llm")
            graph.pairs_judged += len(others)
            mirrors = [o for o in others if relations[o] in MIRRORED]
            for mirror in mirrors:
                for neighbour, relation in graph.edges_of(focal):
                    if neighbour != mirror and graph.relation(mirror, neighbour) is None:
                        graph.set(mirror, neighbour, relation, "mirrored")
            remaining = [o for o in others if o not in mirrors]

    async def _extract(self, question: str, passages: list[RetrievedPassage], graph: ContextGraph) -> None:
        extractions = []
        for i, hit in enumerate(passages):
            reply = await self.llm.adecide(Decision(
                reply=ExtractedReply,
                json_messages=extract_messages(question, hit.passage.text, self.passage_words, as_json=True),
                json_tokens=64, text_messages=extract_messages(question, hit.passage.text, self.passage_words),
                text_tokens=48, parse_text=read_extraction_lines))
            if reply is None:
                graph.unparsed += 1
            extraction = extraction_of(reply) if reply is not None else Extraction()  # unreadable: not answering
            extractions.append(extraction)
            graph.graph.nodes[i].update(entity=extraction.entity, descriptor=extraction.descriptor,
                                        answer=extraction.answer, has_descriptor=bool(extraction.descriptor))
        await asyncio.to_thread(_relate_by_rule, graph, extractions, self.config.match_threshold)


def _relate_by_rule(graph: ContextGraph, extractions: list[Extraction], threshold: float) -> None:
    """Every pair's relation from the two extractions: quadratic in the contexts, so off the event loop."""
    for i in range(len(extractions)):
        for j in range(i + 1, len(extractions)):
            graph.set(i, j, relation_between(extractions[i], extractions[j], threshold), "rule")
    graph.pairs_judged = graph.pairs_total


def _relations(question: str, block: str, focal: int, numbers: list[int]) -> Decision[BaseModel]:
    """The relations of context ``focal`` to ``numbers``: as JSON (a key per context) or as lines."""
    # notes first: each context's entity, descriptor and answer, the three things the text prompt asks it to weigh
    reply = numbered_reply("Relations", "context", tuple(numbers), Relation, notes_chars=NOTES_CHARS)
    return Decision(reply=reply, json_messages=relation_messages(question, block, focal, numbers, as_json=True),
                    json_tokens=NOTES_CHARS // 3 + 14 * len(numbers) + 8,
                    text_messages=relation_messages(question, block, focal, numbers),
                    text_tokens=10 * len(numbers) + 8,
                    parse_text=lambda text: partly_numbered(reply, "context", parse_relations(text, numbers)))
