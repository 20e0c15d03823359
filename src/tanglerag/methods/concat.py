"""Concatenation: all retrieved passages in one prompt, answer with citations or 'unknown'.

With ``methods.samples > 1`` it samples several answers at ``methods.sample_temperature``
and takes the majority (self-consistency); unknown samples do not vote.
"""

from __future__ import annotations

from typing import ClassVar

from tanglerag.answer_parsing import UNKNOWN
from tanglerag.config import MethodsConfig, Settings
from tanglerag.llm.client import LLM
from tanglerag.stages.generate import answer_params, cited_answer_messages, parse_cited_answer
from tanglerag.stages.vote import Candidate, majority_vote
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class ConcatMethod:
    name: ClassVar[str] = "concat"

    def __init__(self, llm: LLM, config: MethodsConfig | None = None) -> None:
        self.llm = llm
        self.config = config or MethodsConfig()

    @classmethod
    def from_settings(cls, llm: LLM, settings: Settings) -> ConcatMethod:
        return cls(llm, settings.methods)

    def generate(self, question: Question, passages: list[RetrievedPassage],
                 tracker: UsageTracker) -> tuple[str, list[str], bool, list[str]]:
        """Return (answer, cited ids, unknown, raw outputs); reused by the multi-round methods."""
        cfg = self.config
        with tracker.stage("generate"):
            completion = self.llm.complete(
                cited_answer_messages(question.text, passages, cfg.passage_words, question.user_contexts),
                answer_params(self.llm, cfg))
            tracker.record(completion)
        parsed = [parse_cited_answer(raw, passages) for raw in completion.texts]
        if cfg.samples == 1:
            text, citations, unknown = parsed[0]
            return text, citations, unknown, completion.texts
        votes = [Candidate(text, None, i, unknown) for i, (text, _, unknown) in enumerate(parsed)]
        winner, _ = majority_vote(votes)
        if winner is None:
            return UNKNOWN, [], True, completion.texts
        text, citations, _ = parsed[winner.rank]
        return text, citations, False, completion.texts

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        text, citations, unknown, raw = self.generate(question, passages, tracker)
        return Answer(question=question.text, method=self.name, text=text, citations=citations, passages=passages,
                      is_unknown=unknown, usage=tracker.usage, extras={"raw": raw})
