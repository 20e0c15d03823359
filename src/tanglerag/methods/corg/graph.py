"""The context graph of COrg: one node per context, one labelled edge per pair.

Relations follow the paper's definitions over (entity, descriptor, answer) of two contexts
that answer the same question. ``ContextGraph`` wraps a networkx graph for the reranker and
turns into the typed ``ContextGraphStep`` of the trace (and back, e.g. to draw it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

import networkx as nx
from pydantic import BaseModel

from tanglerag.methods.corg.steps import ContextGraphStep, GraphEdge, GraphNode
from tanglerag.text import is_unknown, normalize_answer, token_f1


class Relation(StrEnum):
    AMBIGUOUS = "ambiguous"  # one side lacks a descriptor, same answer: interchangeable
    NONE = "none"  # one side lacks a descriptor and the answers differ, or a side does not answer
    DISTRACTING = "distracting"  # both have descriptors and they differ
    COUNTERFACTUAL = "counterfactual"  # same descriptor, different answers
    DUPLICATED = "duplicated"  # same descriptor, same answer


MIRRORED = {Relation.COUNTERFACTUAL, Relation.DUPLICATED}
"""A context in one of these relations to another has that context's relations to everything else."""


class ExtractedReply(BaseModel):
    """What the model says of one context, as it said it (``extraction_of`` cleans it up)."""

    entity: str
    descriptor: str
    answer: str


@dataclass
class Extraction:
    """What one context says about the question (extract mode)."""

    entity: str = ""
    descriptor: str = ""  # "" = the context gives no descriptor
    answer: str | None = None  # None = the context does not answer


@dataclass
class ContextGraph:
    graph: nx.Graph = field(default_factory=nx.Graph)
    mode: str = "pairwise"
    pairs_judged: int = 0
    unparsed: int = 0

    @classmethod
    def empty(cls, passage_ids: list[str], mode: str) -> ContextGraph:
        g = nx.Graph()
        for i, pid in enumerate(passage_ids):
            g.add_node(i, passage_id=pid)
        return cls(graph=g, mode=mode)

    @property
    def size(self) -> int:
        return int(self.graph.number_of_nodes())

    @property
    def pairs_total(self) -> int:
        return self.size * (self.size - 1) // 2

    def set(self, i: int, j: int, relation: Relation, source: str) -> None:
        self.graph.add_edge(i, j, relation=relation.value, source=source)

    def relation(self, i: int, j: int) -> Relation | None:
        data = self.graph.get_edge_data(i, j)
        return Relation(data["relation"]) if data else None

    def edges_of(self, i: int) -> list[tuple[int, Relation]]:
        return [(j, Relation(d["relation"])) for j, d in self.graph[i].items()]

    def pairs(self, relation: Relation) -> list[tuple[int, int]]:
        return sorted((min(i, j), max(i, j)) for i, j, d in self.graph.edges(data=True) if d["relation"] == relation)

    def has_descriptor(self, i: int) -> bool | None:
        """Known in extract mode; None when only relations were judged."""
        known: bool | None = self.graph.nodes[i].get("has_descriptor")
        return known

    def to_step(self) -> ContextGraphStep:
        """The graph as the trace keeps it: nodes by passage id and 1-based prompt number."""
        ids = {i: data["passage_id"] for i, data in self.graph.nodes(data=True)}
        nodes = [GraphNode(number=i + 1, passage_id=ids[i], entity=d.get("entity"), descriptor=d.get("descriptor"),
                           answer=d.get("answer")) for i, d in sorted(self.graph.nodes(data=True))]
        edges = [GraphEdge(source=ids[min(i, j)], target=ids[max(i, j)], relation=d["relation"], origin=d["source"])
                 for i, j, d in sorted(self.graph.edges(data=True), key=lambda e: (min(e[:2]), max(e[:2])))]
        return ContextGraphStep(mode=self.mode, nodes=nodes, edges=edges, pairs_judged=self.pairs_judged,
                                pairs_total=self.pairs_total, unparsed=self.unparsed)

    @classmethod
    def from_step(cls, step: ContextGraphStep) -> ContextGraph:
        position = {node.passage_id: node.number - 1 for node in step.nodes}
        graph = cls.empty([node.passage_id for node in step.nodes], step.mode)
        for node in step.nodes:
            if node.entity is not None:
                graph.graph.nodes[node.number - 1].update(entity=node.entity, descriptor=node.descriptor,
                                                          answer=node.answer, has_descriptor=bool(node.descriptor))
        for edge in step.edges:
            graph.set(position[edge.source], position[edge.target], Relation(edge.relation), edge.origin)
        graph.pairs_judged, graph.unparsed = step.pairs_judged, step.unparsed
        return graph


_NO_DESCRIPTOR = re.compile(r"^\W*(none|null|n/?a|no descriptor|not (given|specified|mentioned)|unknown|-)?\W*$",
                            re.IGNORECASE)


def clean_descriptor(descriptor: str, entity: str = "") -> str:
    """"" for the many ways a model says there is no descriptor (including repeating the entity)."""
    if _NO_DESCRIPTOR.match(descriptor) or normalize_answer(descriptor) == normalize_answer(entity):
        return ""
    return descriptor.strip()


def same_value(a: str, b: str, threshold: float) -> bool:
    """Loose equality for descriptors and answers: normalized equal, contained, or token F1 >= threshold."""
    na, nb = normalize_answer(a), normalize_answer(b)
    if not na or not nb:
        return na == nb
    return f" {na} " in f" {nb} " or f" {nb} " in f" {na} " or token_f1(a, b) >= threshold


def relation_between(a: Extraction, b: Extraction, threshold: float) -> Relation:
    """The paper's definitions applied to two extractions."""
    if a.answer is None or b.answer is None:
        return Relation.NONE
    same_answer = same_value(a.answer, b.answer, threshold)
    if not a.descriptor and not b.descriptor or (a.descriptor and b.descriptor
                                                 and same_value(a.descriptor, b.descriptor, threshold)):
        return Relation.DUPLICATED if same_answer else Relation.COUNTERFACTUAL
    if a.descriptor and b.descriptor:
        return Relation.DISTRACTING
    return Relation.AMBIGUOUS if same_answer else Relation.NONE


_FIELD = re.compile(r"^\W*(entity|descriptor|answer)\s*[:\-]\s*(.*)$", re.IGNORECASE)


def parse_extraction(text: str) -> Extraction | None:
    reply = read_extraction_lines(text)
    return extraction_of(reply) if reply is not None else None


def read_extraction_lines(text: str) -> ExtractedReply | None:
    """Read the Entity/Descriptor/Answer lines; None when the answer line is missing."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = _FIELD.match(line.strip())
        if match and match.group(1).lower() not in fields:
            fields[match.group(1).lower()] = match.group(2).strip()
    if "answer" not in fields:
        return None
    return ExtractedReply(entity=fields.get("entity", ""), descriptor=fields.get("descriptor", ""),
                          answer=fields["answer"])


def extraction_of(reply: ExtractedReply) -> Extraction:
    entity = reply.entity.strip()
    answer = None if is_unknown(reply.answer) else reply.answer.strip()
    return Extraction(entity=entity, descriptor=clean_descriptor(reply.descriptor, entity), answer=answer)


_RELATION_WORD = re.compile(r"\b(duplicat\w*|counter\w*|distract\w*|ambiguous|none)\b", re.IGNORECASE)


def parse_relations(text: str, others: list[int]) -> dict[int, Relation]:
    """Relations per context number (1-based) found in the reply; numbers not asked about are ignored.

    A line names the relation after the context number ("[3] - none"); when it repeats the focal
    context first ("[1] - [3] none"), the last asked-about number before the word counts.
    """
    found: dict[int, Relation] = {}
    for line in text.splitlines():
        match = _RELATION_WORD.search(line)
        if not match:
            continue
        asked = [int(n) for n in re.findall(r"\d+", line[:match.start()]) if int(n) in others]
        if not asked or asked[-1] in found:
            continue
        word = match.group(1).lower()
        found[asked[-1]] = next(r for r in Relation if word.startswith(r.value[:5]))
    return found
