"""CDIT (paper 003): judge the retrieved passages against the question, answer from the consistent ones,
and leave witnesses so the index learns to keep inconsistent passages apart.

The judge applies a Context Matching Dependency (``cdit.cmd``: phi1 or phi1+phi2) with one-word
True/False replies, one call per passage or one batched call (``cdit.batched``), or without an LLM from
dependency parses (``cdit.judge=spacy``). A reply that is neither
is counted as unreadable and the passage is kept: the judge never drops a passage silently. Every pair
(consistent, inconsistent) of one question is a witness; with ``cdit.record`` and an index loaded from a
folder, witnesses go to its trim log, and a pair with ``cdit.witnesses`` witnesses is separated at once
(in this process and for every later load). The answer comes from ``cdit.answer_method`` over the kept
passages, so CDIT wraps any answering method.

>>> runtime.pipeline("cdit").ask("Who turned off the radio?")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import ClassVar

from tanglerag.errors import ConfigError
from tanglerag.index.trim import TrimLog
from tanglerag.llm.client import Request
from tanglerag.methods.base import Method, MethodResult, Resources
from tanglerag.methods.cdit_prompts import judge_batch_messages, judge_messages, parse_verdict, parse_verdict_lines
from tanglerag.stages.cmd_parse import SpacyJudge
from tanglerag.text import clip_words, number_passages
from tanglerag.trace import CditStep, Judgment
from tanglerag.tracking import record_step, stage
from tanglerag.types import Question, RetrievedPassage


class CditMethod(Method):
    name: ClassVar[str] = "cdit"
    paper: ClassVar[str] = "003"
    summary: ClassVar[str] = ("judges each passage against the question (CMD), drops the inconsistent ones, "
                              "records witnesses for index trimming, answers from the rest")
    calls: ClassVar[str] = "1 judgment per passage (1 in all if batched) + the answering method's"
    default_metrics: ClassVar[tuple[str, ...]] = ("accuracy", "em", "f1", "unk", "cited")

    def __init__(self, resources: Resources) -> None:
        super().__init__(resources)
        from tanglerag.methods.registry import make_method  # the registry lists this module: import late

        self.config = self.settings.cdit
        if self.config.answer_method == self.name:
            raise ConfigError("cdit.answer_method must be another method, not cdit itself")
        self.inner = make_method(self.config.answer_method, resources)
        self.parser_judge = SpacyJudge(resources.embedder, self.config.spacy_threshold)  # loads on first use

    def judge(self, question: str, passages: list[RetrievedPassage]) -> list[bool | None]:
        words = self.settings.methods.passage_words
        if self.config.judge == "spacy":
            with stage("judge"):
                return self.parser_judge.judge(self.config.cmd, question,
                                               [clip_words(h.passage.text, words) for h in passages])
        params = self.llm.params(max_tokens=self.config.judge_tokens * (len(passages) if self.config.batched else 1))
        with stage("judge"):
            if self.config.batched:
                reply = self.llm.complete(judge_batch_messages(self.config.cmd, question,
                                                               number_passages(passages, words), len(passages)),
                                          params).text
                return parse_verdict_lines(reply, len(passages))
            requests = [Request(judge_messages(self.config.cmd, question, clip_words(h.passage.text, words)), params)
                        for h in passages]
            return [parse_verdict(c.text) for c in self.llm.complete_many(requests)]

    def run(self, question: Question, passages: list[RetrievedPassage]) -> MethodResult:
        verdicts = self.judge(question.text, passages) if passages else []
        kept = [h for h, v in zip(passages, verdicts, strict=True) if v is not False]
        consistent = [h.passage.id for h, v in zip(passages, verdicts, strict=True) if v is True]
        discarded = [h.passage.id for h, v in zip(passages, verdicts, strict=True) if v is False]
        step = CditStep(cmd=self.config.cmd, judge=f"{self.config.judge}:{self.config.cmd}",
                        judgments=[Judgment(passage_id=h.passage.id, consistent=v)
                                   for h, v in zip(passages, verdicts, strict=True)],
                        discarded=discarded, answer_method=self.inner.name)
        index = self.resources.index
        if self.config.record and index is not None and index.folder is not None and consistent and discarded:
            with stage("trim"):
                log = TrimLog(index.folder)
                step.separated_now = log.add_witnesses(question.text, consistent, discarded, judge=step.judge,
                                                       k=self.config.witnesses)
                step.witnesses_added = len(consistent) * len(discarded)
                step.recorded = True
                if step.separated_now:
                    index.apply_trim(log.state())
        record_step(step)
        result = self.inner.run(question, kept)
        if result.passages is None:
            result.passages = kept
        return result
