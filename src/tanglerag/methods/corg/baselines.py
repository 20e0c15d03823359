"""The six baselines of COrg (paper 000, Section 5.2 / Appendix D.2).

Single run: ``base`` (all contexts in one call), ``retrieve`` (the LLM ranks contexts by
relevance and diversity, the top ones are answered in one call), ``summarize`` (summary, then
answer). Grouping: ``random`` and ``kmeans`` split the contexts into as many groups as COrg
would (so only the grouping differs). Individual: ``separate`` (one call per context).
Every baseline answers in the same cited multi-answer format as COrg.
"""

from __future__ import annotations

import asyncio
import random
import re
from typing import ClassVar

import numpy as np

from tanglerag.methods.base import MethodOutput
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.method import CorgMethod, MultiAnswerMethod, groups_step
from tanglerag.methods.corg.multi_answer import ask_group
from tanglerag.methods.corg.prompts import rank_messages, summary_messages
from tanglerag.methods.corg.steps import ContextRankingStep, ContextSummaryStep
from tanglerag.text import number_passages
from tanglerag.tracking import record_step, stage, streamed_answer
from tanglerag.types import Passage, Question, RetrievedPassage


class OneCallBaseline(MultiAnswerMethod):
    name: ClassVar[str] = "base"
    description: ClassVar[str] = "all contexts in one call, in COrg's multi-answer format"
    calls: ClassVar[str] = "1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        groups = [list(range(len(passages)))] if passages else []
        return self.finish(passages, await self.answer_groups(question.text, passages, groups))


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
    description: ClassVar[str] = "the LLM ranks contexts (relevance, diversity); the top ones answered in one call"
    calls: ClassVar[str] = "2"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return self.finish(passages, [])
        with stage("retrieve"):
            block = number_passages(passages, self.settings.methods.passage_words, title_sep=None)
            reply = await self.llm.acomplete(rank_messages(question.text, block),
                                             self.llm.params(max_tokens=4 * len(passages) + 8))
        ranking = parse_ranking(reply.text, len(passages))
        # the chosen contexts keep their original order, so the answer prompt shares Base's prefix
        chosen = sorted(ranking[:self.settings.section(CorgConfig).retrieve_top])
        record_step(ContextRankingStep(ranking=[passages[i].passage.id for i in ranking],
                                       chosen=[passages[i].passage.id for i in chosen]))
        return self.finish(passages, await self.answer_groups(question.text, passages, [chosen]))


class SummarizeMethod(MultiAnswerMethod):
    name: ClassVar[str] = "summarize"
    description: ClassVar[str] = "the LLM summarizes the contexts; the answer comes from the summary"
    calls: ClassVar[str] = "2"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return self.finish(passages, [])
        cfg = self.settings.section(CorgConfig)
        with stage("summarize"):
            block = number_passages(passages, self.settings.methods.passage_words, title_sep=None)
            reply = await self.llm.acomplete(summary_messages(question.text, block),
                                             self.llm.params(max_tokens=cfg.summary_tokens))
        summary = reply.text.strip() or "(empty summary)"
        record_step(ContextSummaryStep(summary=summary))
        pseudo = [RetrievedPassage(passage=Passage(id=f"{question.id or 'q'}-summary", text=summary), score=0.0,
                                   rank=0)]
        with stage("generate"), streamed_answer():
            parts = await ask_group(self.llm, question.text, pseudo, 0, cfg.answer_tokens, None)
        for part in parts:
            part.citations = []  # a summary cannot be cited: it is not one of the passages
        return self.finish(passages, parts)


class _GroupingBaseline(MultiAnswerMethod):
    """Use COrg's group count (its graph calls are cached when COrg ran first), group differently."""

    async def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        raise NotImplementedError

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return self.finish(passages, [])
        organized = await CorgMethod(self.resources).organize(question, passages)
        k = max(1, min(len(organized.groups), len(passages)))
        groups = [g for g in await self.group(question, passages, k) if g]
        record_step(groups_step(self.name, passages, groups, [question.text] * len(groups)))
        return self.finish(passages, await self.answer_groups(question.text, passages, groups))


class RandomMethod(_GroupingBaseline):
    name: ClassVar[str] = "random"
    description: ClassVar[str] = "as many groups as COrg, formed at random; one call per group"
    calls: ClassVar[str] = "1 per group (as many groups as COrg)"

    async def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        order = list(range(len(passages)))
        random.Random(f"{self.settings.section(CorgConfig).seed}:{question.id or question.text}").shuffle(order)
        return [sorted(order[g::k]) for g in range(k)]


class KMeansMethod(_GroupingBaseline):
    name: ClassVar[str] = "kmeans"
    description: ClassVar[str] = "as many groups as COrg, formed by k-means on embeddings; one call per group"
    calls: ClassVar[str] = "1 per group (as many groups as COrg)"

    async def group(self, question: Question, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        if k == 1:
            return [list(range(len(passages)))]
        return await asyncio.to_thread(self._cluster, passages, k)

    def _cluster(self, passages: list[RetrievedPassage], k: int) -> list[list[int]]:
        """Embedding and k-means: CPU work, run in a worker thread so the event loop keeps serving."""
        from sklearn.cluster import KMeans

        vectors = np.asarray(self.resources.embedder.embed([p.passage.text for p in passages]), dtype=np.float32)
        seed = self.settings.section(CorgConfig).seed
        labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(vectors)
        return [[i for i, label in enumerate(labels) if label == g] for g in range(k)]


class SeparateMethod(MultiAnswerMethod):
    name: ClassVar[str] = "separate"
    description: ClassVar[str] = "one call per context, outputs concatenated"
    calls: ClassVar[str] = "1 per passage"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        groups = [[i] for i in range(len(passages))]
        return self.finish(passages, await self.answer_groups(question.text, passages, groups))

