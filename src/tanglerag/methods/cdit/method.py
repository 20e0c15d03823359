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

import asyncio
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from tanglerag.errors import ConfigError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.trim import TrimLog
from tanglerag.llm.structured import Decision, numbered_reply, numbered_values, partly_numbered
from tanglerag.methods.base import Method, MethodOutput, Resources, make_method
from tanglerag.methods.cdit.cmd_parse import SpacyJudge
from tanglerag.methods.cdit.config import CditConfig
from tanglerag.methods.cdit.determiner import CloseJudgedQuery, QueryMemory
from tanglerag.methods.cdit.prompts import (
    BATCH_LINE_TOKENS,
    VerdictReply,
    judge_batch_messages,
    judge_messages,
    parse_verdict,
    parse_verdict_lines,
)
from tanglerag.methods.cdit.steps import CditStep, Judgment
from tanglerag.text import clip_words, number_passages
from tanglerag.tracking import record_step, stage
from tanglerag.types import Question, RetrievedPassage


class CditMethod(Method):
    name: ClassVar[str] = "cdit"
    paper: ClassVar[str] = "003"
    description: ClassVar[str] = ("judges each passage against the question (CMD), drops the inconsistent ones, "
                              "records witnesses for index trimming, answers from the rest")
    calls: ClassVar[str] = "1 judgment per passage (1 in all if batched) + the answering method's"
    default_metrics: ClassVar[tuple[str, ...]] = ("accuracy", "em", "f1", "unk", "cited")

    def __init__(self, resources: Resources) -> None:
        super().__init__(resources)

        self.config = self.settings.section(CditConfig)
        if self.config.answer_method == self.name:
            raise ConfigError("cdit.answer_method must be another method, not cdit itself")
        self.inner = make_method(self.config.answer_method, resources)
        self.parser_judge = SpacyJudge(resources.embedder, self.config.spacy_threshold)  # loads on first use
        self._memory: QueryMemory | None = None

    @property
    def order_dependent(self) -> bool:
        """The determiner recalls earlier questions' verdicts, and recorded witnesses trim the index."""
        index = self.resources.index
        return self.config.determiner or (self.config.record and index is not None and index.folder is not None)

    async def judge(self, question: str, passages: list[RetrievedPassage]) -> list[bool | None]:
        """A verdict per passage: the spaCy judge parses in a worker thread, the LLM judge asks one batch (a call
        per passage) or one call for all."""
        words = self.settings.methods.passage_words
        if self.config.judge == "spacy":
            with stage("judge"):
                return await asyncio.to_thread(self.parser_judge.judge, self.config.cmd, question,
                                               [clip_words(h.passage.text, words) for h in passages])
        with stage("judge"):
            if self.config.batched:
                numbers = list(range(1, len(passages) + 1))
                found = numbered_values(await self.llm.adecide(self._batch(question, passages, words)), "passage",
                                        numbers)
                return [found.get(n) for n in numbers]
            replies = await self.llm.adecide_many([self._single(question, clip_words(h.passage.text, words))
                                                   for h in passages])
            return [reply.match if reply is not None else None for reply in replies]

    def _single(self, question: str, passage: str) -> Decision[VerdictReply]:
        def read(text: str) -> VerdictReply | None:
            verdict = parse_verdict(text)
            return None if verdict is None else VerdictReply(match=verdict)

        cmd, tokens = self.config.cmd, self.config.judge_tokens
        return Decision(reply=VerdictReply, json_messages=judge_messages(cmd, question, passage, as_json=True),
                        json_tokens=tokens + 8, text_messages=judge_messages(cmd, question, passage),
                        text_tokens=tokens, parse_text=read)

    def _batch(self, question: str, passages: list[RetrievedPassage], words: int | None) -> Decision[BaseModel]:
        numbered, count = number_passages(passages, words), len(passages)
        numbers = tuple(range(1, count + 1))
        reply = numbered_reply("Verdicts", "passage", numbers, bool)
        cmd, tokens = self.config.cmd, self.config.judge_tokens
        return Decision(reply=reply, json_messages=judge_batch_messages(cmd, question, numbered, count, as_json=True),
                        json_tokens=(tokens + BATCH_LINE_TOKENS + 4) * count,
                        text_messages=judge_batch_messages(cmd, question, numbered, count),
                        text_tokens=(tokens + BATCH_LINE_TOKENS) * count,
                        parse_text=lambda text: partly_numbered(reply, "passage", dict(enumerate(parse_verdict_lines(
                            text, count), start=1))))

    def memory(self) -> QueryMemory:
        """The determiner's memory of judged queries: in the index folder when there is one."""
        index = self.resources.index
        folder = index.folder if index is not None else None
        if self._memory is None or self._memory.folder != folder:
            self._memory = QueryMemory(folder, self.resources.embedder, self.config.reuse_threshold)
        return self._memory

    async def verdicts(self, question: str, passages: list[RetrievedPassage], step: CditStep) -> list[bool | None]:
        """Judge the passages, taking what a close query judged before from the determiner (which embeds and reads
        and writes its files in worker threads)."""
        if not self.config.determiner:
            return await self.judge(question, passages)
        with stage("determine"):
            vector, recalled = await asyncio.to_thread(self._recall, question)
        known = recalled.verdicts if recalled else {}
        fresh = [h for h in passages if h.passage.id not in known]
        judged = dict(zip((h.passage.id for h in fresh), await self.judge(question, fresh) if fresh else [],
                          strict=True))
        if recalled:
            step.reused_from, step.reused = recalled.query, len(passages) - len(fresh)
        if fresh:
            await asyncio.to_thread(self.memory().remember, question, {**known, **judged}, vector)
        return [judged[h.passage.id] if h.passage.id in judged else known[h.passage.id] for h in passages]

    def _recall(self, question: str) -> tuple[np.ndarray, CloseJudgedQuery | None]:
        """The question's embedding and the close query the determiner remembers, if any."""
        vector = self.resources.embedder.embed([question])[0]
        return vector, self.memory().recall(question, vector)

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        kept = await self.filter(question, passages)
        result = await self.inner.arun_named(question, kept)
        if result.passages is None:
            result.passages = kept
        return result

    async def filter(self, question: Question, passages: list[RetrievedPassage]) -> list[RetrievedPassage]:
        """Judge, record witnesses (and separate pairs), and return the passages kept; the whole of CDIT but
        the answer, which is what ``cdit trim`` runs over a question set."""
        step = CditStep(cmd=self.config.cmd, judge=f"{self.config.judge}:{self.config.cmd}", judgments=[],
                        discarded=[], answer_method=self.inner.name)
        verdicts = await self.verdicts(question.text, passages, step) if passages else []
        kept = [h for h, v in zip(passages, verdicts, strict=True) if v is not False]
        consistent = [h.passage.id for h, v in zip(passages, verdicts, strict=True) if v is True]
        step.discarded = [h.passage.id for h, v in zip(passages, verdicts, strict=True) if v is False]
        step.judgments = [Judgment(passage_id=h.passage.id, consistent=v) for h, v in zip(passages, verdicts,
                                                                                          strict=True)]
        index = self.resources.index
        # a close query recalled is not an independent witness: only fresh queries leave witnesses
        if (self.config.record and step.reused_from is None and index is not None and index.folder is not None
                and consistent and step.discarded):
            with stage("trim"):
                await asyncio.to_thread(self._record_witnesses, question.text, consistent, step, index, index.folder)
        record_step(step)
        return kept

    def _record_witnesses(self, question: str, consistent: list[str], step: CditStep, index: PassageIndex,
                          folder: Path) -> None:
        """Add the question's witnesses to the trim log in the index's ``folder`` and trim the index at once for the
        pairs they separate (file work under a lock, and HNSW links cut: run in a worker thread)."""
        log = TrimLog(folder)
        step.separated_now = log.add_witnesses(question, consistent, step.discarded, judge=step.judge,
                                               k=self.config.witnesses)
        step.witnesses_added = len(consistent) * len(step.discarded)
        step.recorded = True
        if step.separated_now:
            index.apply_trim(log.state())
