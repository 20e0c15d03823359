"""COrg (paper 000): graph constructor -> reranker -> aggregator with citations.

The answer lists every answer with its descriptor and the passages it came from, as text
and as structured ``parts`` (one per answer, with the group that produced it). The trace keeps
the graph, the groups with the question each was asked, and the dropped contexts with reasons.
"""

from __future__ import annotations

from typing import ClassVar

from tanglerag.methods.base import MULTI_ANSWER_METRICS, Method, MethodOutput
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.corg.conflicts import overrule
from tanglerag.methods.corg.constructor import GraphConstructor
from tanglerag.methods.corg.multi_answer import ask_group
from tanglerag.methods.corg.plural import plural_by_llm, plural_by_rule
from tanglerag.methods.corg.reranker import Organized, organize
from tanglerag.methods.corg.steps import ContextGroup, DroppedContext, GroupsStep
from tanglerag.stages.multi_answer import merge_parts, render
from tanglerag.tracking import record_step, stage, streamed_answer
from tanglerag.types import AnswerPart, Question, RetrievedPassage


class MultiAnswerMethod(Method):
    """Shared plumbing of COrg and its baselines: groups of contexts in, one cited answer out."""

    paper: ClassVar[str] = "000"
    default_metrics: ClassVar[tuple[str, ...]] = MULTI_ANSWER_METRICS
    answer_is_streamed_text: ClassVar[bool] = False  # merged, described and numbered after the calls (``render``)

    async def answer_groups(self, question: str | list[str], passages: list[RetrievedPassage],
                            groups: list[list[int]]) -> list[AnswerPart]:
        """One call per group, one after another; ``question`` may differ per group."""
        questions = question if isinstance(question, list) else [question] * len(groups)
        parts: list[AnswerPart] = []
        with stage("generate"), streamed_answer():
            for g, (members, text) in enumerate(zip(groups, questions, strict=True)):
                parts += await ask_group(self.llm, text, [passages[i] for i in members], g,
                                         self.settings.section(CorgConfig).answer_tokens,
                                         self.settings.methods.passage_words)
        return parts

    @staticmethod
    def finish(passages: list[RetrievedPassage], parts: list[AnswerPart]) -> MethodOutput:
        parts = merge_parts(parts)
        text, citations = render(parts, passages)
        return MethodOutput(text, citations, unknown=not parts, parts=parts)


def groups_step(strategy: str, passages: list[RetrievedPassage], groups: list[list[int]],
                questions: list[str] | None = None, organized: Organized | None = None,
                answer_each: bool = False) -> GroupsStep:
    ids = [p.passage.id for p in passages]
    questions = questions or [""] * len(groups)
    dropped = [DroppedContext(passage_id=ids[d.context], reason=d.reason, kept_instead=ids[d.kept_instead])
               for d in (organized.dropped if organized else [])]
    return GroupsStep(strategy=strategy, groups=[ContextGroup(passage_ids=[ids[i] for i in g], question=q)
                                                 for g, q in zip(groups, questions, strict=True)],
                      dropped=dropped, answer_each=answer_each)


class CorgMethod(MultiAnswerMethod):
    name: ClassVar[str] = "corg"
    description: ClassVar[str] = "context graph -> reranker -> one call per group; answers with descriptors and [n]"
    calls: ClassVar[str] = "graph: 1 per passage pair (1 in extract mode); then 1 per group"

    async def organize(self, question: Question, passages: list[RetrievedPassage]) -> Organized:
        """Graph (recorded in the trace) and groups; Random and KMeans reuse it for their group count."""
        constructor = GraphConstructor(self.llm, self.settings.section(CorgConfig), self.settings.methods.passage_words)
        graph = await constructor.build(question.text, passages)
        record_step(graph.to_step())
        with stage("rerank"):
            return organize(graph)

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return self.finish(passages, [])
        organized = await self.organize(question, passages)
        if self.settings.section(CorgConfig).answer_each:
            # one call per kept context with the question as asked: Separate's answer recall without the
            # contexts the reranker dropped; each part keeps the number of the COrg group it came from
            calls = [[i] for members in organized.groups for i in members]
            owner = [g for g, members in enumerate(organized.groups) for _ in members]
            questions = [question.text] * len(calls)
            group_questions = [question.text] * len(organized.groups)
        else:
            calls, owner = organized.groups, list(range(len(organized.groups)))
            questions = group_questions = await self._group_questions(question.text, organized.groups)
        record_step(groups_step("corg", passages, organized.groups, group_questions, organized,
                                self.settings.section(CorgConfig).answer_each))
        parts = await self.answer_groups(questions, passages, calls)
        for part in parts:
            assert part.group is not None  # answer_groups numbers every part
            part.group = owner[part.group]
        if self.settings.section(CorgConfig).conflicts == "support":
            parts, step = overrule(merge_parts(parts), organized, passages)
            record_step(step)
        return self.finish(passages, parts)

    async def _group_questions(self, question: str, groups: list[list[int]]) -> list[str]:
        """The question as asked for a one-context group, its plural form (made once) for larger ones."""
        questions = []
        with stage("rerank"):
            plural = None
            for members in groups:
                if len(members) == 1:
                    questions.append(question)
                    continue
                if plural is None:
                    plural = (await plural_by_llm(self.llm, question)
                              if self.settings.section(CorgConfig).plural == "llm" else plural_by_rule(question))
                questions.append(plural)
        return questions
