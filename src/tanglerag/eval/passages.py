"""Build each question's passage list for an eval run: scope, gold passage handling, gold position.

The post-fusion paper compares settings "with" and "without" the gold passage and studies its
position; these are properties of the experiment, not of the methods, so they live here.

Passages are ranked by ``retrieval.mode`` like any retrieval. For questions that carry their own passages that choice
is also a cost: ``dense`` embeds each question's passages (MiniLM on a CPU dominates a run against a fast model
server, unless the embedding cache already holds them), ``bm25`` ranks them by BM25 over those passages alone and
embeds nothing, ``hybrid`` fuses both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from tanglerag.config import EvalConfig, IndexConfig, RetrievalConfig
from tanglerag.datasets.base import QAExample
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex, embed_text
from tanglerag.index.sparse import BM25Index
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
                 shared_index: PassageIndex | None = None, where: Where | None = None, *,
                 retrieval: RetrievalConfig | None = None,
                 store_search: Callable[[str, int], list[RetrievedPassage]] | None = None) -> None:
        """``where``: rank only passages whose metadata passes it (``retrieval.where``), own or pooled.
        ``retrieval``: its ``mode`` (dense, bm25, hybrid) and ``rrf_k`` rank the passages (default: dense).
        ``store_search``: a vector store's search (``store.backend``), its filter pushed down, for questions
        without passages of their own when there is no shared index."""
        self.config = config
        self.where = where
        self.embedder = embedder
        self.shared_index = shared_index
        self.store_search = store_search
        self.retrieval = retrieval or RetrievalConfig()
        if config.passage_scope == "pooled" and shared_index is None:
            pooled = {p.id: p for ex in examples for p in ex.passages}
            if not pooled:
                raise InputError("passage_scope=pooled needs a dataset whose questions carry passages")
            self.shared_index = PassageIndex.build(list(pooled.values()), embedder, self._local_config())

    def _local_config(self) -> IndexConfig:
        return IndexConfig(index_type="flat", bm25=self.retrieval.mode != "dense")

    def ranking(self, example: QAExample, depth: int) -> list[RetrievedPassage]:
        mode, rrf_k = self.retrieval.mode, self.retrieval.rrf_k
        if self.config.passage_scope == "own" and example.passages:
            if mode == "bm25":
                return bm25_ranking(example.passages, example.question, self.where)
            local = PassageIndex.build(example.passages, self.embedder, self._local_config())
            return local.search(example.question, len(example.passages), mode, rrf_k, where=self.where)
        if self.shared_index is None and self.store_search is not None:
            return self.store_search(example.question, depth)
        if self.shared_index is None:
            raise InputError(f"example {example.id} has no passages of its own: pass --index to retrieve from")
        return self.shared_index.search(example.question, depth, mode, rrf_k, where=self.where)

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


def bm25_ranking(passages: list[Passage], question: str, where: Where | None = None) -> list[RetrievedPassage]:
    """Every one of ``passages`` ranked by BM25 over these passages alone (nothing embedded): those sharing no word
    with the question follow in their given order with score 0, so all of them are ranked, as a dense ranking of
    them would be. ``where`` then decides which are shown, as it does for an index (the statistics stay those of
    all of them)."""
    if not question.strip():
        raise InputError("query is empty")
    # unstemmed, as every stored run's rankings were made (an index's BM25 part is stemmed: index/sparse.py)
    scored = BM25Index.build([embed_text(p) for p in passages], stemmer=None).search(question, len(passages))
    seen = {i for i, _ in scored}
    order = scored + [(i, 0.0) for i in range(len(passages)) if i not in seen]
    shown = [(i, score) for i, score in order if where is None or where.matches(passages[i].metadata)]
    return [RetrievedPassage(passage=passages[i], score=score, rank=rank) for rank, (i, score) in enumerate(shown, 1)]
