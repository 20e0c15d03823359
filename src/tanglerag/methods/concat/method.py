"""Concatenation: all retrieved passages in one prompt, answer with citations or 'unknown'.

``methods.concat_prompt=post_fusion`` asks with post-fusion's answer prompt instead (format examples,
best-guess line), as paper 004 compares the strategies; the cited prompt is the default for ``ask``.

With ``methods.samples > 1`` it samples several answers at ``methods.sample_temperature``
and takes the majority (self-consistency); unknown samples do not vote.
"""

from __future__ import annotations

from typing import ClassVar

from tanglerag.methods.base import Method, MethodOutput
from tanglerag.stages.generate import (
    answer_params,
    cited_answer_decision,
    cited_answer_messages,
    parse_cited_answer,
    read_cited_answer,
    short_answers,
    single_passage_messages,
)
from tanglerag.stages.vote import Candidate, majority_vote
from tanglerag.text import number_passages
from tanglerag.tracking import stage, streamed_answer
from tanglerag.types import Question, RetrievedPassage


class ConcatMethod(Method):
    name: ClassVar[str] = "concat"
    paper: ClassVar[str] = "baseline"
    description: ClassVar[str] = "all passages in one prompt; a short answer with [n] citations, or unknown"
    calls: ClassVar[str] = "1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        """Also the first round of Concat+PF."""
        cfg = self.settings.methods
        if cfg.concat_prompt == "post_fusion":  # the same prompt post-fusion asks about each passage
            messages = single_passage_messages(question.text, number_passages(passages, cfg.passage_words))
        else:
            messages = cited_answer_messages(question.text, passages, cfg.passage_words, question.user_contexts)
        if cfg.samples == 1:  # one answer: a decision, asked as JSON under llm.structured
            with stage("generate"), streamed_answer():
                if cfg.concat_prompt == "post_fusion":
                    line = (await short_answers(self.llm, [messages], answer_params(self.llm, cfg)))[0][0]
                    return MethodOutput(*parse_cited_answer(line, passages))
                reply = await self.llm.adecide(cited_answer_decision(messages, passages, cfg.answer_tokens),
                                               answer_params(self.llm, cfg))
            return MethodOutput(*read_cited_answer(reply, passages))
        with stage("generate"):
            completion = await self.llm.acomplete(messages, answer_params(self.llm, cfg))
        parsed = [parse_cited_answer(raw, passages) for raw in completion.texts]
        votes = [Candidate(text, None, i, unknown) for i, (text, _, unknown) in enumerate(parsed)]
        winner, _ = majority_vote(votes)
        if winner is None:
            return MethodOutput.abstain()
        text, citations, _ = parsed[winner.rank]
        return MethodOutput(text, citations)
