"""Answer-integration strategies from "Modeling Uncertainty and Using Post-fusion as Fallback" (paper 004).

- ``post-fusion``: one call per passage, then a majority vote over the non-unknown answers.
- ``pruning`` / ``summary``: one-shot chain-of-thought prompts over all passages.
- ``concat+pf``: concatenation; only when it says unknown, fall back to post-fusion.
- ``pf+concat``: post-fusion, keep passages whose own answer is not unknown, then one call that
  picks (distils) the answer from those passages and the candidates.
Concatenation itself (the baseline) lives in ``concat.py``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from tanglerag.answer_parsing import UNKNOWN, first_answer_line, is_unknown
from tanglerag.config import MethodsConfig, Settings
from tanglerag.llm.client import LLM, Request
from tanglerag.methods.concat import ConcatMethod
from tanglerag.methods.post_fusion_prompts import (
    PRUNING_DEMO_ANSWER,
    PRUNING_SYSTEM,
    SUMMARY_DEMO_ANSWER,
    SUMMARY_SYSTEM,
    cot_messages,
    distill_messages,
    single_passage_messages,
)
from tanglerag.stages.generate import answer_params, clip_words, number_passages
from tanglerag.stages.vote import Candidate, majority_vote
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


def _pool_record(pool: list[Candidate]) -> list[dict]:
    return [{"passage_id": c.passage_id, "answer": c.text, "unknown": c.unknown} for c in pool]


class _Base:
    name: ClassVar[str]

    def __init__(self, llm: LLM, config: MethodsConfig | None = None) -> None:
        self.llm = llm
        self.config = config or MethodsConfig()

    @classmethod
    def from_settings(cls, llm: LLM, settings: Settings):
        return cls(llm, settings.methods)

    def _voted(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker,
               **extras: object) -> Answer:
        """Post-fusion: answer pool, then majority vote; citations are the passages that voted for the winner."""
        pool = post_fusion_pool(self.llm, self.config, question, passages, tracker)
        winner, supporters = majority_vote(pool)
        if winner is None:
            return self._result(question, passages, tracker, UNKNOWN, [], True, pool=_pool_record(pool), **extras)
        return self._result(question, passages, tracker, winner.text, _unique(c.passage_id for c in supporters),
                            False, pool=_pool_record(pool), **extras)

    def _result(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker, text: str,
                citations: list[str], unknown: bool, **extras: object) -> Answer:
        return Answer(question=question.text, method=self.name, text=UNKNOWN if unknown else text,
                      citations=[] if unknown else citations, passages=passages, is_unknown=unknown,
                      usage=tracker.usage, extras=extras)


def post_fusion_pool(llm: LLM, config: MethodsConfig, question: Question, passages: list[RetrievedPassage],
                     tracker: UsageTracker) -> list[Candidate]:
    """Ask about each passage separately; ``config.samples`` answers per passage (p x k in all)."""
    params = answer_params(llm, config)
    requests = [Request(single_passage_messages(question.text, clip_words(hit.passage.text, config.passage_words)),
                        params) for hit in passages]
    pool = []
    with tracker.stage("post_fusion"):
        for hit, completion in zip(passages, llm.complete_many(requests), strict=True):
            tracker.record(completion)
            for raw in completion.texts:
                line = first_answer_line(raw)
                pool.append(Candidate(line, hit.passage.id, hit.rank, is_unknown(line)))
    return pool


class PostFusionMethod(_Base):
    name: ClassVar[str] = "post-fusion"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        return self._voted(question, passages, tracker)


class ConcatPostFusionMethod(_Base):
    """Concat+PF: post-fusion only as the fallback when concatenation says unknown."""

    name: ClassVar[str] = "concat+pf"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        text, citations, unknown, raw = ConcatMethod(self.llm, self.config).generate(question, passages, tracker)
        if not unknown:
            return self._result(question, passages, tracker, text, citations, False, fallback=False, raw=raw)
        return self._voted(question, passages, tracker, fallback=True)


class PostFusionConcatMethod(_Base):
    """PF+Concat: post-fusion proposes candidates and filters passages; one concatenated call distils."""

    name: ClassVar[str] = "pf+concat"

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        pool = post_fusion_pool(self.llm, self.config, question, passages, tracker)
        kept_ids = _unique(c.passage_id for c in pool if not c.unknown)
        if not kept_ids:
            return self._result(question, passages, tracker, UNKNOWN, [], True, pool=_pool_record(pool), kept=[])
        kept = [hit for hit in passages if hit.passage.id in kept_ids]
        candidates = _unique(c.text for c in sorted(pool, key=lambda c: c.rank) if not c.unknown)
        messages = distill_messages(question.text, number_passages(kept, self.config.passage_words), candidates)
        with tracker.stage("distill"):
            completion = self.llm.complete(messages, self.llm.params(max_tokens=self.config.answer_tokens,
                                                                     stop=["\n"]))
            tracker.record(completion)
        line = first_answer_line(completion.text)
        if is_unknown(line):
            return self._result(question, passages, tracker, UNKNOWN, [], True, pool=_pool_record(pool),
                                kept=kept_ids, raw=completion.text)
        chosen = Candidate(line, None, 0)
        citations = [c.passage_id for c in pool if not c.unknown and c.key == chosen.key]
        return self._result(question, passages, tracker, line, _unique(citations), False, pool=_pool_record(pool),
                            kept=kept_ids, raw=completion.text)


_FINAL_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)


class _ChainOfThought(_Base):
    system: ClassVar[str]
    demo: ClassVar[str]

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        context = "\n".join(f"[{i}] {hit.passage.title + ' | ' if hit.passage.title else ''}"
                            f"{clip_words(hit.passage.text, self.config.passage_words)}" for i, hit in enumerate(passages, 1))
        messages = cot_messages(self.system, self.demo, question.text, context)
        with tracker.stage("generate"):
            completion = self.llm.complete(messages, self.llm.params(max_tokens=self.config.cot_tokens))
            tracker.record(completion)
        found = _FINAL_ANSWER.findall(completion.text)
        line = first_answer_line(found[-1]) if found else ""
        unknown = is_unknown(line)
        cited = [passages[int(n) - 1].passage.id for n in re.findall(r"[Ss]ource (\d+)", completion.text)
                 if 1 <= int(n) <= len(passages)]
        return self._result(question, passages, tracker, line, _unique(cited), unknown, raw=completion.text,
                            format_ok=bool(found))


class PruningMethod(_ChainOfThought):
    name: ClassVar[str] = "pruning"
    system = PRUNING_SYSTEM
    demo = PRUNING_DEMO_ANSWER


class SummaryMethod(_ChainOfThought):
    name: ClassVar[str] = "summary"
    system = SUMMARY_SYSTEM
    demo = SUMMARY_DEMO_ANSWER


def _unique(items) -> list:
    return list(dict.fromkeys(i for i in items if i is not None))
