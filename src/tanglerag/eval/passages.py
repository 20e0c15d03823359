"""Build each question's passage list for an eval run: scope, gold passage handling, gold position.

The post-fusion paper compares settings "with" and "without" the gold passage and studies its
position; these are properties of the experiment, not of the methods, so they live here.
"""

from __future__ import annotations

import hashlib

from tanglerag.config import EvalConfig, IndexConfig
from tanglerag.datasets.base import QAExample
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.text import normalize_answer, strip_citations
from tanglerag.types import Passage, RetrievedPassage
from tanglerag.where import Where


def is_gold(passage: Passage, example: QAExample) -> bool:
    """RAMDocs marks correct documents per question; other formats may carry has_answer; else answer string match.

    A typed passage of another question is never gold: its label speaks about that question.
    """
    if passage.metadata.get("type"):
        return passage.metadata["type"] == "correct" and any(p.id == passage.id for p in example.passages)
    if "has_answer" in passage.metadata:
        return bool(passage.metadata["has_answer"])
    text = f" {normalize_answer(passage.text)} "
    return any(f" {normalize_answer(strip_citations(a))} " in text for a in example.answers if normalize_answer(a))


class PassageBuilder:
    def __init__(self, examples: list[QAExample], embedder: TextEmbedder, config: EvalConfig,
                 shared_index: PassageIndex | None = None, where: Where | None = None) -> None:
        """``where``: rank only passages whose metadata passes it (``retrieval.where``), own or pooled."""
        self.config = config
        self.where = where
        self.embedder = embedder
        self.shared_index = shared_index
        if config.passage_scope == "pooled" and shared_index is None:
            pooled = {p.id: p for ex in examples for p in ex.passages}
            if not pooled:
                raise InputError("passage_scope=pooled needs a dataset whose questions carry passages")
            self.shared_index = PassageIndex.build(list(pooled.values()), embedder, IndexConfig(index_type="flat"))

    def ranking(self, example: QAExample, depth: int) -> list[RetrievedPassage]:
        if self.config.passage_scope == "own" and example.passages:
            local = PassageIndex.build(example.passages, self.embedder, IndexConfig(index_type="flat"))
            return local.search(example.question, len(example.passages), where=self.where)
        if self.shared_index is None:
            raise InputError(f"example {example.id} has no passages of its own: pass --index to retrieve from")
        return self.shared_index.search(example.question, depth, where=self.where)

    def build(self, example: QAExample, k: int) -> list[RetrievedPassage]:
        ranking = self.ranking(example, max(k * 10, 50))
        gold = self.config.gold
        if gold == "exclude":
            ranking = [h for h in ranking if not is_gold(h.passage, example)]
        top = ranking[:k]
        if gold == "ensure" and not any(is_gold(h.passage, example) for h in top):
            best_gold = next((h for h in ranking if is_gold(h.passage, example)), None)
            if best_gold is None:
                best_gold = next((RetrievedPassage(passage=p, score=0.0, rank=len(ranking) + 1)
                                  for p in example.passages if is_gold(p, example)), None)
            if best_gold is not None:  # replaces the last passage, placed at a seeded random position
                top = top[: k - 1]
                top.insert(self._random_slot(example, len(top) + 1), best_gold)
        return self._place_gold(top, example)

    def _random_slot(self, example: QAExample, slots: int) -> int:
        """Where an inserted gold passage goes: random as in paper 004, fixed by the seed and the question id."""
        digest = hashlib.sha256(f"{self.config.seed}:{example.id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % slots

    def _place_gold(self, top: list[RetrievedPassage], example: QAExample) -> list[RetrievedPassage]:
        position = self.config.gold_position
        if position == "retrieval":
            return top
        gold = next((h for h in top if is_gold(h.passage, example)), None)
        if gold is None:
            return top
        rest = [h for h in top if h is not gold]
        return [gold, *rest] if position == "top" else [*rest, gold]
