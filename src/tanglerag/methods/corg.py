"""COrg (paper 000): graph constructor -> reranker -> aggregator with citations.

The answer lists every answer with its descriptor and the passages it came from, as text
and as structured ``parts`` (one per answer, with the group that produced it).
"""

from __future__ import annotations

from typing import ClassVar

from tanglerag.config import Settings
from tanglerag.llm.client import LLM
from tanglerag.organize.constructor import GraphConstructor
from tanglerag.organize.graph import ContextGraph
from tanglerag.organize.plural import plural_by_llm, plural_by_rule
from tanglerag.organize.reranker import Organized, organize
from tanglerag.stages.multi_answer import ask_group, merge_parts, render
from tanglerag.types import Answer, AnswerPart, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class MultiAnswerMethod:
    """Shared plumbing of COrg and its baselines: groups of contexts in, one cited answer out."""

    name: ClassVar[str] = ""

    def __init__(self, llm: LLM, settings: Settings) -> None:
        self.llm = llm
        self.settings = settings
        self.config = settings.corg
        self.passage_words = settings.methods.passage_words

    @classmethod
    def from_settings(cls, llm: LLM, settings: Settings) -> MultiAnswerMethod:
        return cls(llm, settings)

    def answer_groups(self, question: str | list[str], passages: list[RetrievedPassage], groups: list[list[int]],
                      tracker: UsageTracker) -> tuple[list[AnswerPart], list[str]]:
        """One call per group; ``question`` may differ per group. Returns (parts, raw replies)."""
        questions = question if isinstance(question, list) else [question] * len(groups)
        parts: list[AnswerPart] = []
        raws = []
        with tracker.stage("generate"):
            for g, (members, text) in enumerate(zip(groups, questions, strict=True)):
                found, raw = ask_group(self.llm, text, [passages[i] for i in members], g,
                                       self.config.answer_tokens, self.passage_words, tracker)
                parts += found
                raws.append(raw)
        return parts, raws

    def finish(self, question: Question, passages: list[RetrievedPassage], parts: list[AnswerPart],
               tracker: UsageTracker, **extras) -> Answer:
        parts = merge_parts(parts)
        text, citations = render(parts, passages)
        unknown = not parts
        return Answer(question=question.text, method=self.name, text=text or "unknown", citations=citations,
                      passages=passages, parts=parts, is_unknown=unknown, usage=tracker.usage, extras=extras)


class CorgMethod(MultiAnswerMethod):
    name: ClassVar[str] = "corg"

    def organize(self, question: Question, passages: list[RetrievedPassage],
                 tracker: UsageTracker) -> tuple[ContextGraph, Organized]:
        """Graph and groups; Random and KMeans reuse it for their group count."""
        graph = GraphConstructor(self.llm, self.config, self.passage_words).build(question.text, passages, tracker)
        with tracker.stage("rerank"):
            return graph, organize(graph)

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        if not passages:
            return self.finish(question, passages, [], tracker)
        graph, organized = self.organize(question, passages, tracker)
        if self.config.answer_each:
            # one call per kept context with the question as asked: Separate's answer recall without the
            # contexts the reranker dropped; each part keeps the number of the COrg group it came from
            calls = [[i] for members in organized.groups for i in members]
            owner = [g for g, members in enumerate(organized.groups) for _ in members]
            questions = [question.text] * len(calls)
        else:
            calls, owner = organized.groups, list(range(len(organized.groups)))
            questions = self._group_questions(question.text, organized.groups, tracker)
        parts, raws = self.answer_groups(questions, passages, calls, tracker)
        for part in parts:
            part.group = owner[part.group]
        return self.finish(question, passages, parts, tracker, graph=graph.to_dict(), groups=organized.groups,
                           dropped=organized.dropped, group_questions=questions, raw=raws)

    def _group_questions(self, question: str, groups: list[list[int]], tracker: UsageTracker) -> list[str]:
        """The question as asked for a one-context group, its plural form (made once) for larger ones."""
        questions = []
        with tracker.stage("rerank"):
            plural = None
            for members in groups:
                if len(members) == 1:
                    questions.append(question)
                    continue
                if plural is None:
                    plural = (plural_by_llm(self.llm, question, tracker) if self.config.plural == "llm"
                              else plural_by_rule(question))
                questions.append(plural)
        return questions
