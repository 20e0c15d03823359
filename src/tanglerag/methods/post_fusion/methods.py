"""Answer-integration strategies from "Modeling Uncertainty and Using Post-fusion as Fallback" (paper 004).

- ``post-fusion``: one call per passage, then a majority vote over the non-unknown answers.
- ``pruning`` / ``summary``: one-shot chain-of-thought prompts over all passages.
- ``concat+pf``: concatenation; only when it says unknown, fall back to post-fusion.
- ``pf+concat``: post-fusion, keep passages whose own answer is not unknown, then one call that
  picks (distils) the answer from those passages and the candidates.
Concatenation itself (the baseline) is the ``concat`` family; Concat+PF asks it by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, TypeVar

from tanglerag.config import MethodsConfig
from tanglerag.llm.client import LLM
from tanglerag.methods.base import Method, MethodOutput, make_method
from tanglerag.methods.post_fusion.prompts import (
    PRUNING_DEMO_ANSWER,
    PRUNING_SYSTEM,
    SUMMARY_DEMO_ANSWER,
    SUMMARY_SYSTEM,
    cot_messages,
    distill_messages,
)
from tanglerag.methods.post_fusion.steps import AnswerPoolStep, DistillStep, FallbackStep, PoolAnswer, RationaleStep
from tanglerag.stages.generate import answer_params, short_answers, single_passage_messages
from tanglerag.stages.vote import Candidate, majority_vote, tally
from tanglerag.text import clip_words, first_answer_line, is_unknown, number_passages
from tanglerag.tracking import record_step, stage, streamed_answer
from tanglerag.types import Question, RetrievedPassage


async def post_fusion_pool(llm: LLM, config: MethodsConfig, question: Question,
                           passages: list[RetrievedPassage]) -> list[Candidate]:
    """Ask about each passage separately, in one batch; ``config.samples`` answers per passage (p x k in all)."""
    prompts = [single_passage_messages(question.text, clip_words(hit.passage.text, config.passage_words))
               for hit in passages]
    pool = []
    with stage("post_fusion"):
        answers = await short_answers(llm, prompts, answer_params(llm, config))
        for hit, lines in zip(passages, answers, strict=True):
            pool += [Candidate(line, hit.passage.id, hit.rank, is_unknown(line)) for line in lines]
    return pool


def _pool_step(pool: list[Candidate], winner: Candidate | None, voted: bool = True) -> AnswerPoolStep:
    return AnswerPoolStep(pool=[PoolAnswer(passage_id=c.passage_id, answer=c.text, unknown=c.unknown) for c in pool],
                          tally=tally(pool), voted=voted, winner=winner.text if winner else None)

T = TypeVar("T")


class _PostFusionBase(Method):
    paper: ClassVar[str] = "004"

    async def voted(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """Post-fusion: answer pool, then majority vote; citations are the passages that voted for the winner."""
        pool = await post_fusion_pool(self.llm, self.settings.methods, question, passages)
        winner, supporters = majority_vote(pool)
        record_step(_pool_step(pool, winner))
        if winner is None:
            return MethodOutput.abstain()
        return MethodOutput(winner.text, _unique(c.passage_id for c in supporters))


class PostFusionMethod(_PostFusionBase):
    name: ClassVar[str] = "post-fusion"
    description: ClassVar[str] = "one call per passage; majority vote over the non-unknown answers"
    calls: ClassVar[str] = "1 per passage"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        return await self.voted(question, passages)


class ConcatPostFusionMethod(_PostFusionBase):
    """Concat+PF: post-fusion only as the fallback when concatenation says unknown."""

    name: ClassVar[str] = "concat+pf"
    description: ClassVar[str] = "concatenation; post-fusion only when it says unknown"
    calls: ClassVar[str] = "1; + 1 per passage when it says unknown"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        first = await make_method("concat", self.resources).arun_named(question, passages)
        record_step(FallbackStep(fired=first.unknown))
        return await self.voted(question, passages) if first.unknown else first


class PostFusionConcatMethod(_PostFusionBase):
    """PF+Concat: post-fusion proposes candidates and filters passages; one concatenated call distils."""

    name: ClassVar[str] = "pf+concat"
    description: ClassVar[str] = "post-fusion proposes candidates and keeps passages that answered; one call distils"
    calls: ClassVar[str] = "1 per passage + 1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        cfg = self.settings.methods
        pool = await post_fusion_pool(self.llm, cfg, question, passages)
        record_step(_pool_step(pool, None, voted=False))
        kept_ids = _unique(c.passage_id for c in pool if not c.unknown)
        if not kept_ids:
            record_step(DistillStep(kept=[], candidates=[]))
            return MethodOutput.abstain()
        kept = [hit for hit in passages if hit.passage.id in kept_ids]
        candidates = _unique(c.text for c in sorted(pool, key=lambda c: c.rank) if not c.unknown)
        messages = distill_messages(question.text, number_passages(kept, cfg.passage_words), candidates)
        with stage("distill"), streamed_answer():
            lines = await short_answers(self.llm, [messages], self.llm.params(max_tokens=cfg.answer_tokens,
                                                                               stop=["\n"]))
        line = lines[0][0]
        unknown = is_unknown(line)
        record_step(DistillStep(kept=kept_ids, candidates=candidates, chosen=None if unknown else line))
        if unknown:
            return MethodOutput.abstain()
        chosen = Candidate(line, None, 0)
        citations = [c.passage_id for c in pool if not c.unknown and c.key == chosen.key]
        return MethodOutput(line, _unique(citations))


_FINAL_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)


class _ChainOfThought(_PostFusionBase):
    system: ClassVar[str]
    demo: ClassVar[str]

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        cfg = self.settings.methods
        context = number_passages(passages, cfg.passage_words, title_sep=" | ", joiner="\n")
        messages = cot_messages(self.system, self.demo, question.text, context)
        with stage("generate"), streamed_answer():
            completion = await self.llm.acomplete(messages, self.llm.params(max_tokens=cfg.cot_tokens))
        found = _FINAL_ANSWER.findall(completion.text)
        line = first_answer_line(found[-1]) if found else ""
        numbers = [int(n) for n in re.findall(r"[Ss]ource (\d+)", completion.text) if 1 <= int(n) <= len(passages)]
        record_step(RationaleStep(format_ok=bool(found), cited_numbers=_unique(numbers)))
        return MethodOutput(line, _unique(passages[n - 1].passage.id for n in numbers), is_unknown(line))


class PruningMethod(_ChainOfThought):
    name: ClassVar[str] = "pruning"
    description: ClassVar[str] = "one-shot chain of thought that rules out irrelevant passages, then answers"
    calls: ClassVar[str] = "1"
    system = PRUNING_SYSTEM
    demo = PRUNING_DEMO_ANSWER


class SummaryCoTMethod(_ChainOfThought):
    name: ClassVar[str] = "summary"
    description: ClassVar[str] = "one-shot chain of thought that sums up the relevant passages, then answers"
    calls: ClassVar[str] = "1"
    system = SUMMARY_SYSTEM
    demo = SUMMARY_DEMO_ANSWER


def _unique(items: Iterable[T | None]) -> list[T]:
    return list(dict.fromkeys(i for i in items if i is not None))
