"""Diva (paper 001): diversify retrieval with pseudo-interpretations, verify it, adapt the generation.

``diva``: (1) the ambiguity type(s) of the question and a reason, (2) pseudo-interpretations written from
that reason, (3) retrieval for the question and every interpretation, (4) the union pruned to the
passages most similar on average to all interpretations, (5) verification — do the kept passages answer
each interpretation? — graded Useful (all), PartialUseful (some) or Useless (none), (6) a cited long answer
from the passages, or a closed-book one when they are Useless. Baselines beside it: ``diva-rd`` (steps 1-4,
always RAG), ``closed-book``, ``query-refinement`` (interpretations as hints, closed-book), ``vanilla-rag``
(the retrieved passages, same long-answer prompt) and ``toc`` (an iterative tree of clarifications: retrieval
and one call per node, depth and node limits, no pruning). Every step lands in the trace (``DivaStep``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from tanglerag.errors import IndexStoreError, InputError
from tanglerag.index.passage_index import embed_text
from tanglerag.llm.structured import Decision, numbered_reply, numbered_values, partly_numbered
from tanglerag.methods.base import Method, MethodOutput, Resources
from tanglerag.methods.diva.config import DivaConfig
from tanglerag.methods.diva.demos import DemoPool
from tanglerag.methods.diva.prompts import (
    Ambiguity,
    Clarifications,
    Coverage,
    Demo,
    Interpretations,
    ambiguity_messages,
    clarify_messages,
    interpretation_messages,
    long_answer_messages,
    parse_long_answer,
    parse_yes_no_lines,
    read_ambiguity,
    read_clarification_lines,
    read_coverage,
    read_interpretation_lines,
    usable_interpretations,
    verify_batch_messages,
    verify_messages,
)
from tanglerag.methods.diva.steps import (
    ClarificationNode,
    ClarificationTreeStep,
    DivaStep,
    Grade,
    InterpretationRetrieval,
    KeptPassage,
    Verification,
)
from tanglerag.text import cited_numbers, is_unknown, normalize_answer, number_passages, strip_citations
from tanglerag.tracking import record_step, stage, streamed_answer
from tanglerag.types import AnswerPart, Passage, Question, RetrievedPassage

LONG_ANSWER_METRICS = ("rouge_l", "d_f1", "dr", "mrecall@5")
LONG_ANSWER_STOP = ["\nPassages:", "\nQuestion:", "\nExample"]
"""The small model tends to go on with a new prompt section after its answer; these end the reply there."""


def grade(verdicts: list[bool | None]) -> Grade:
    """Useful when every interpretation is covered, Useless when none is (unreadable counts as not)."""
    covered = sum(bool(v) for v in verdicts)
    return "Useful" if verdicts and covered == len(verdicts) else "Useless" if covered == 0 else "PartialUseful"


class _LongAnswerMethod(Method):
    """Shared steps: demonstrations, interpretations, retrieval per query, pruning, verification, generation."""

    paper: ClassVar[str] = "001"
    default_metrics: ClassVar[tuple[str, ...]] = LONG_ANSWER_METRICS

    def __init__(self, resources: Resources) -> None:
        super().__init__(resources)
        self.config = self.settings.section(DivaConfig)
        self._pool: DemoPool | None = None

    # -- demonstrations -----------------------------------------------------------------
    async def demos(self, question: str) -> list[Demo]:
        """The nearest demonstrations, found in a worker thread: the pool is read and embedded on first use."""
        if not self.config.demos or self.config.demo_pool is None:
            return []
        return await asyncio.to_thread(self._nearest_demos, question, self.config.demo_pool)

    def _nearest_demos(self, question: str, pool: Path) -> list[Demo]:
        if self._pool is None:
            self._pool = DemoPool.from_file(pool, self.resources.embedder)
        return self._pool.nearest(question, self.config.demos)

    async def begin(self, question: Question, mode: str) -> tuple[list[Demo], DivaStep]:
        """The question's demonstrations and the trace step every method of the family fills in."""
        demos = await self.demos(question.text)
        return demos, DivaStep(mode=mode, demos=[d.question for d in demos])

    # -- (1) + (2) ----------------------------------------------------------------------
    async def interpret(self, question: str, demos: list[Demo], step: DivaStep, with_reason: bool = True) -> list[str]:
        """Pseudo-interpretations; the question alone when the model gives nothing usable (counted)."""
        budget = self.config.step_tokens
        with stage("interpret"):
            if with_reason:
                ambiguity = await self.llm.adecide(Decision(
                    reply=Ambiguity, json_messages=ambiguity_messages(question, as_json=True), json_tokens=budget,
                    text_messages=ambiguity_messages(question), text_tokens=budget, parse_text=read_ambiguity))
                if ambiguity is not None:
                    step.ambiguity_types, step.reason = ambiguity.named_types(), ambiguity.reason
                step.unreadable += ambiguity is None
            reply = await self.llm.adecide(Decision(
                reply=Interpretations,
                json_messages=interpretation_messages(question, step.reason, demos, as_json=True), json_tokens=budget,
                text_messages=interpretation_messages(question, step.reason, demos), text_tokens=budget,
                parse_text=read_interpretation_lines))
        step.unreadable += reply is None
        found = usable_interpretations(reply.questions, question, self.config.max_interpretations) if reply else []
        step.interpretation_fallback = not found
        step.interpretations = found or [question]
        return step.interpretations

    # -- (3) + (4) ----------------------------------------------------------------------
    def search(self, queries: list[str], pool: list[RetrievedPassage], k: int) -> list[list[RetrievedPassage]]:
        """Top-k per query: from the retriever when there is one, else from the passages handed over (embedded
        once for all the queries). Blocking work: the methods call it in a worker thread."""
        if self.resources.retriever is not None:
            return [self.resources.retriever.retrieve(Question(text=q), k).passages for q in queries]
        if not pool or not queries:
            return [[] for _ in queries]
        scores = self._vectors([h.passage for h in pool]) @ self.resources.embedder.embed(queries).T  # pool x queries
        ranked = []
        for column in scores.T:
            order = np.argsort(-column, kind="stable")[:k]
            ranked.append([RetrievedPassage(passage=pool[i].passage, score=float(column[i]), rank=r)
                           for r, i in enumerate(order, 1)])
        return ranked

    async def diversify(self, question: Question, passages: list[RetrievedPassage], interpretations: list[str],
                        step: DivaStep) -> list[RetrievedPassage]:
        """Retrieval per interpretation, and the union pruned to the top-k by mean similarity to them all; the
        retrieval and the embedding run in worker threads."""
        k = self.config.top_k
        with stage("retrieve"):
            union: dict[str, RetrievedPassage] = {h.passage.id: h for h in passages[:k]}
            step.retrievals.append(InterpretationRetrieval(query=question.text, passage_ids=list(union)))
            queries = [q for q in interpretations if normalize_answer(q) != normalize_answer(question.text)]
            found = await asyncio.to_thread(self.search, queries, passages, k)
            for query, hits in zip(queries, found, strict=True):
                step.retrievals.append(InterpretationRetrieval(query=query, passage_ids=[h.passage.id for h in hits]))
                for hit in hits:
                    union.setdefault(hit.passage.id, hit)
            candidates = list(union.values())
            if not candidates:
                return []
            relevance = await asyncio.to_thread(self._relevance, candidates, interpretations)
            order = np.argsort(-relevance, kind="stable")[:k]
        kept = [RetrievedPassage(passage=candidates[i].passage, score=float(relevance[i]), rank=r)
                for r, i in enumerate(order, 1)]
        step.kept = [KeptPassage(passage_id=h.passage.id, relevance=h.score) for h in kept]
        return kept

    def _relevance(self, candidates: list[RetrievedPassage], interpretations: list[str]) -> np.ndarray:
        """Each candidate's mean similarity to the interpretations."""
        relevance: np.ndarray = (self._vectors([h.passage for h in candidates])
                                 @ self.resources.embedder.embed(interpretations).T).mean(axis=1)
        return relevance

    def _vectors(self, passages: list[Passage]) -> np.ndarray:
        """Index vectors where the index holds the passages (no re-embedding), else embedded as the index would."""
        index = self.resources.index
        if index is not None:
            try:
                return index.vectors([p.id for p in passages])
            except IndexStoreError:
                pass
        return self.resources.embedder.embed([embed_text(p) for p in passages])

    # -- (5) ----------------------------------------------------------------------------
    async def verify(self, interpretations: list[str], kept: list[RetrievedPassage], step: DivaStep) -> Grade:
        block = number_passages(kept, self.settings.methods.passage_words)
        step.verification_mode = self.config.verification
        with stage("verify"):
            if self.config.verification == "each":
                replies = await self.llm.adecide_many([
                    Decision(reply=Coverage, json_messages=verify_messages(block, q, as_json=True), json_tokens=8,
                             text_messages=verify_messages(block, q), text_tokens=4, parse_text=read_coverage)
                    for q in interpretations])
                verdicts = [r.contains_answer if r is not None else None for r in replies]
            else:
                verdicts = await self._verify_batch(block, interpretations)
        step.verification = [Verification(interpretation=q, covered=v)
                             for q, v in zip(interpretations, verdicts, strict=True)]
        step.unreadable += verdicts.count(None)
        step.grade = grade(verdicts)
        return step.grade

    async def _verify_batch(self, block: str, interpretations: list[str]) -> list[bool | None]:
        """One call for all interpretations: a required key per interpretation as JSON, numbered lines as text."""
        numbers = list(range(1, len(interpretations) + 1))
        reply = numbered_reply("Coverages", "question", tuple(numbers), bool)

        def read(text: str) -> BaseModel:
            return partly_numbered(reply, "question", {n: v for n, v in zip(numbers, parse_yes_no_lines(
                text, len(numbers)), strict=True) if v is not None})

        # the JSON budget allows for indented lines (~14 tokens a key): a cut-off reply reads as no verdict at all
        found = numbered_values(await self.llm.adecide(Decision(
            reply=reply, json_messages=verify_batch_messages(block, interpretations, as_json=True),
            json_tokens=14 * len(numbers) + 8, text_messages=verify_batch_messages(block, interpretations),
            text_tokens=6 * len(numbers), parse_text=read)), "question", numbers)
        return [found.get(n) for n in numbers]

    # -- (6) ----------------------------------------------------------------------------
    async def generate(self, question: str, demos: list[Demo], passages: list[RetrievedPassage] | None,
                 hints: list[str] | None = None) -> MethodOutput:
        """A long answer from ``passages`` (cited), or closed-book for None."""
        block = None if passages is None else number_passages(passages, self.settings.methods.passage_words)
        with stage("generate"), streamed_answer():
            completion = await self.llm.acomplete(long_answer_messages(question, demos, block, hints),
                                                  self.llm.params(max_tokens=self.config.answer_tokens,
                                                                  stop=LONG_ANSWER_STOP))
        reply = completion.text
        interpretations, paragraph = parse_long_answer(reply)
        used = passages or []

        def ids(text: str) -> list[str]:
            return [used[n - 1].passage.id for n in cited_numbers(text) if 1 <= n <= len(used)]

        parts = [AnswerPart(answer=strip_citations(a), descriptor=strip_citations(q), citations=ids(f"{q} {a}"))
                 for q, a in interpretations if not is_unknown(a)]
        text = paragraph or " ".join(f"{p.descriptor} {p.answer}." for p in parts)
        if not text or is_unknown(text):
            return MethodOutput.abstain(passages=used)
        return MethodOutput(text, list(dict.fromkeys(ids(reply))), parts=parts, passages=used)


class DivaMethod(_LongAnswerMethod):
    name: ClassVar[str] = "diva"
    description: ClassVar[str] = "pseudo-interpretations -> retrieval per reading -> pruning -> verification -> RAG or closed-book"
    calls: ClassVar[str] = "4: ambiguity, interpretations, verification, answer"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        demos, step = await self.begin(question, "rag")
        interpretations = await self.interpret(question.text, demos, step)
        kept = await self.diversify(question, passages, interpretations, step)
        step.grade = await self.verify(interpretations, kept, step) if kept else "Useless"
        step.mode = "closed-book" if step.grade == "Useless" else "rag"
        record_step(step)
        return await self.generate(question.text, demos, None if step.mode == "closed-book" else kept)


class DivaRDMethod(_LongAnswerMethod):
    name: ClassVar[str] = "diva-rd"
    description: ClassVar[str] = "Diva's retrieval diversification only: always answers from the pruned passages"
    calls: ClassVar[str] = "3: ambiguity, interpretations, answer"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        demos, step = await self.begin(question, "rag")
        interpretations = await self.interpret(question.text, demos, step)
        kept = await self.diversify(question, passages, interpretations, step)
        record_step(step)
        return await self.generate(question.text, demos, kept)


class ClosedBookMethod(_LongAnswerMethod):
    name: ClassVar[str] = "closed-book"
    description: ClassVar[str] = "a long answer from the model's own knowledge, no passages"
    calls: ClassVar[str] = "1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        demos, step = await self.begin(question, "closed-book")
        record_step(step)
        return await self.generate(question.text, demos, None)


class QueryRefinementMethod(_LongAnswerMethod):
    name: ClassVar[str] = "query-refinement"
    description: ClassVar[str] = "the question refined into readings, given as hints to a closed-book long answer"
    calls: ClassVar[str] = "2: interpretations, answer"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        demos, step = await self.begin(question, "closed-book")
        interpretations = await self.interpret(question.text, demos, step, with_reason=False)
        record_step(step)
        hints = None if step.interpretation_fallback else interpretations
        return await self.generate(question.text, demos, None, hints=hints)


class VanillaRAGMethod(_LongAnswerMethod):
    name: ClassVar[str] = "vanilla-rag"
    description: ClassVar[str] = "top-k passages for the question, then the same long-answer prompt"
    calls: ClassVar[str] = "1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        demos, step = await self.begin(question, "rag")
        kept = passages[:self.config.top_k]
        step.kept = [KeptPassage(passage_id=h.passage.id, relevance=h.score) for h in kept]
        record_step(step)
        return await self.generate(question.text, demos, kept)


class DivaOracleMethod(_LongAnswerMethod):
    """Diva's retrieval with the gold disambiguated questions in place of the model's (Table 3's oracle row):
    how far better interpretations alone would take retrieval and the answer."""

    name: ClassVar[str] = "diva-oracle"
    description: ClassVar[str] = "oracle: retrieval per gold disambiguated question -> pruning -> RAG (evaluation only)"
    calls: ClassVar[str] = "1: answer"
    reads_gold_interpretations: ClassVar[bool] = True

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not question.interpretations:
            raise InputError("diva-oracle needs the question's gold interpretations: evaluate it on an ASQA-format "
                             "dataset")
        demos, step = await self.begin(question, "rag")
        step.interpretations = list(question.interpretations)
        kept = await self.diversify(question, passages, step.interpretations, step)
        record_step(step)
        return await self.generate(question.text, demos, kept)


class ToCMethod(_LongAnswerMethod):
    """Tree of clarifications: each node's question is retrieved for and clarified into child questions
    (breadth first, ``diva.toc_depth`` levels, ``diva.toc_nodes`` expansions); the long answer uses the
    clarifications found and passages gathered across the tree."""

    name: ClassVar[str] = "toc"
    description: ClassVar[str] = "iterative tree of clarifications with retrieval per node (the costly baseline)"
    calls: ClassVar[str] = "1 per clarification node (<= diva.toc_nodes) + 1 answer"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        k = self.config.top_k
        demos = await self.demos(question.text)
        nodes: list[ClarificationNode] = []
        seen = {normalize_answer(question.text)}
        queue: list[tuple[str, int, int | None]] = [(question.text, 0, None)]
        gathered: list[list[RetrievedPassage]] = []
        expansions = 0
        while queue and expansions < self.config.toc_nodes:
            query, depth, parent = queue.pop(0)
            with stage("retrieve"):
                found = [passages[:k]] if depth == 0 else await asyncio.to_thread(self.search, [query], passages, k)
            hits = found[0]
            gathered.append(hits)
            block = number_passages(hits, self.settings.methods.passage_words)
            with stage("clarify"):
                reply = await self.llm.adecide(Decision(
                    reply=Clarifications, json_messages=clarify_messages(query, block, as_json=True),
                    json_tokens=self.config.step_tokens, text_messages=clarify_messages(query, block),
                    text_tokens=self.config.step_tokens, parse_text=read_clarification_lines))
            expansions += 1
            for child_question, answer in [(r.question, r.answer) for r in (reply.readings if reply else [])]:
                if normalize_answer(child_question) in seen or is_unknown(answer):
                    continue
                seen.add(normalize_answer(child_question))
                nodes.append(ClarificationNode(question=child_question, answer=answer, depth=depth + 1, parent=parent,
                                               passage_ids=[h.passage.id for h in hits]))
                if depth + 1 < self.config.toc_depth:
                    queue.append((child_question, depth + 1, len(nodes) - 1))
        record_step(ClarificationTreeStep(nodes=nodes, expansions=expansions))
        used = _round_robin(gathered, k)
        hints = [f"{n.question} (found: {n.answer})" for n in nodes]
        return await self.generate(question.text, demos, used, hints=hints or None)


def _round_robin(lists: list[list[RetrievedPassage]], k: int) -> list[RetrievedPassage]:
    """Up to k distinct passages taking each expansion's best in turn, so every branch is represented."""
    chosen: dict[str, RetrievedPassage] = {}
    for rank in range(max((len(x) for x in lists), default=0)):
        for hits in lists:
            if rank < len(hits) and len(chosen) < k:
                chosen.setdefault(hits[rank].passage.id, hits[rank])
    return [h.model_copy(update={"rank": r}) for r, h in enumerate(chosen.values(), 1)]

