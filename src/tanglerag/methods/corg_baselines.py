"""The six baselines of COrg (paper 000, Section 5.2 / Appendix D.2).

Single run: ``base`` (all contexts in one call), ``retrieve`` (the LLM ranks contexts by
relevance and diversity, the top ones are answered in one call), ``summarize`` (summary, then
answer). Grouping: ``random`` and ``kmeans`` split the contexts into as many groups as COrg
would (so only the grouping differs). Individual: ``separate`` (one call per context).
Every baseline answers in the same cited multi-answer format as COrg.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

import numpy as np

from tanglerag.config import Settings
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.llm.client import LLM
from tanglerag.methods.corg import CorgMethod, MultiAnswerMethod
from tanglerag.organize.prompts import context_block, rank_messages, summary_messages
from tanglerag.stages.multi_answer import ask_group
from tanglerag.types import Answer, Passage, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class BaseMethod(MultiAnswerMethod):
    name: ClassVar[str] = "base"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        groups = [list(range(len(passages)))] if passages else []
        parts, raws = self.answer_groups(question.text, passages, groups, tracker)
        return self.finish(question, passages, parts, tracker, raw=raws)


def parse_ranking(text: str, n: int) -> list[int]:
    """0-based context order from a reply of numbers; unmentioned contexts follow in their order."""
    order: list[int] = []
    for number in re.findall(r"\d+", text):
        index = int(number) - 1
        if 0 <= index < n and index not in order:
            order.append(index)
    return order + [i for i in range(n) if i not in order]


class RetrieveMethod(MultiAnswerMethod):
    name: ClassVar[str] = "retrieve"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        if not passages:
            return self.finish(question, passages, [], tracker)
        with tracker.stage("retrieve"):
            block = context_block([p.passage.text for p in passages], self.passage_words)
            reply = self.llm.complete(rank_messages(question.text, block),
                                      self.llm.params(max_tokens=4 * len(passages) + 8))
            tracker.record(reply)
        ranking = parse_ranking(reply.text, len(passages))
        # the chosen contexts keep their original order, so the answer prompt shares Base's prefix
        chosen = sorted(ranking[:self.config.retrieve_top])
        parts, raws = self.answer_groups(question.text, passages, [chosen], tracker)
        return self.finish(question, passages, parts, tracker, ranking=ranking, chosen=chosen, raw=raws)


class SummarizeMethod(MultiAnswerMethod):
    name: ClassVar[str] = "summarize"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        if not passages:
            return self.finish(question, passages, [], tracker)
        with tracker.stage("summarize"):
            block = context_block([p.passage.text for p in passages], self.passage_words)
            reply = self.llm.complete(summary_messages(question.text, block),
                                      self.llm.params(max_tokens=self.config.summary_tokens))
            tracker.record(reply)
        summary = reply.text.strip() or "(empty summary)"
        pseudo = [RetrievedPassage(passage=Passage(id=f"{question.id or 'q'}-summary", text=summary), score=0.0,
                                   rank=0)]
        with tracker.stage("generate"):
            parts, raw = ask_group(self.llm, question.text, pseudo, 0, self.config.answer_tokens, None, tracker)
        for part in parts:
            part.citations = []  # a summary cannot be cited: it is not one of the passages
        return self.finish(question, passages, parts, tracker, summary=summary, raw=[raw])


class _GroupingBaseline(MultiAnswerMethod):
    """Use COrg's group count (its graph calls are cached when COrg ran first), group differently."""

    def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        raise NotImplementedError

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        if not passages:
            return self.finish(question, passages, [], tracker)
        _, organized = CorgMethod(self.llm, self.settings).organize(question, passages, tracker)
        k = max(1, min(len(organized.groups), len(passages)))
        groups = [g for g in self.group(question, passages, k) if g]
        parts, raws = self.answer_groups(question.text, passages, groups, tracker)
        return self.finish(question, passages, parts, tracker, groups=groups, raw=raws)


class RandomMethod(_GroupingBaseline):
    name: ClassVar[str] = "random"

    def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        order = list(range(len(passages)))
        random.Random(f"{self.config.seed}:{question.id or question.text}").shuffle(order)
        return [sorted(order[g::k]) for g in range(k)]


class KMeansMethod(_GroupingBaseline):
    name: ClassVar[str] = "kmeans"

    def __init__(self, llm: LLM, settings: Settings, embedder: TextEmbedder | None = None) -> None:
        super().__init__(llm, settings)
        self.embedder = embedder or Embedder(settings.embedding)  # loads on first use

    def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        if k == 1:
            return [list(range(len(passages)))]
        from sklearn.cluster import KMeans

        vectors = np.asarray(self.embedder.embed([p.passage.text for p in passages]), dtype=np.float32)
        labels = KMeans(n_clusters=k, n_init=10, random_state=self.config.seed).fit_predict(vectors)
        return [[i for i, label in enumerate(labels) if label == g] for g in range(k)]


class SeparateMethod(MultiAnswerMethod):
    name: ClassVar[str] = "separate"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        groups = [[i] for i in range(len(passages))]
        parts, raws = self.answer_groups(question.text, passages, groups, tracker)
        return self.finish(question, passages, parts, tracker, raw=raws)


CORG_METHODS = [CorgMethod, BaseMethod, RetrieveMethod, SummarizeMethod, RandomMethod, KMeansMethod, SeparateMethod]
