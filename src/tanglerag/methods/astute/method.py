"""Astute RAG: (a) the model writes what it knows, (b) its passages and the retrieved ones, each marked with its
source, are consolidated into groups that agree (conflicts flagged, irrelevant sources left out), for
``astute.iterations`` rounds, (c) the answer is chosen among the groups by how reliable their support is.

The paper picks one answer; for a name that refers to several people or things (RAMDocs, AmbigDocs) the choice may
name one answer per referent, in the multi-answer shape. Answers cite only retrieved documents: a passage from the
model's memory is shown as such in the trace and is never cited.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field, create_model

from tanglerag.llm.structured import Decision
from tanglerag.methods.astute.config import AstuteConfig
from tanglerag.methods.astute.prompts import choose_messages, consolidate_messages, recall_messages
from tanglerag.methods.astute.steps import AstuteStep, SourceGroup
from tanglerag.methods.base import CONFLICT_METRICS, Method, MethodOutput
from tanglerag.stages.multi_answer import Parts, bounded_answers, labelled_line, merge_parts, read_part_lines, render
from tanglerag.text import cited_numbers, clip_words, is_unknown, strip_citations
from tanglerag.tracking import record_step, stage
from tanglerag.types import AnswerPart, Question, RetrievedPassage

MAX_GROUPS = 8


class MemoryPassages(BaseModel):  # passages the model writes from its own memory, step (a)
    passages: list[str] = Field(max_length=5)


class Group(BaseModel):
    statement: str = Field(max_length=300)
    answer: str = Field(max_length=120)
    sources: list[int]
    conflict: bool


class Consolidated(BaseModel):
    groups: list[Group] = Field(max_length=MAX_GROUPS)


class Choice(Parts):
    reason: str = Field(max_length=300)


@cache
def consolidated_reply(sources: int) -> type[Consolidated]:
    group = create_model("BoundedGroup", __base__=Group,
                         sources=(list[Annotated[int, Field(ge=1, le=sources)]], Field(max_length=sources)))
    groups: tuple[Any, ...] = (list[group], Field(max_length=MAX_GROUPS))
    return create_model("BoundedConsolidated", __base__=Consolidated, groups=groups)


@cache
def choice_reply(groups: int) -> type[Choice]:
    return create_model("BoundedChoice", __base__=Choice, answers=bounded_answers(groups))


_PASSAGE = re.compile(r"^\s*(?:passage\s*\d*\s*:|\d+[.):]|[-*•])\s*(.+)$", re.IGNORECASE)


def read_recall_lines(text: str, limit: int) -> MemoryPassages:
    found = [m[1].strip() for line in text.splitlines() if (m := _PASSAGE.match(line)) and not is_unknown(m[1])]
    return MemoryPassages.model_construct(passages=found[:limit])


def read_group_lines(text: str, sources: int) -> Consolidated | None:
    """``statement | answer | [n] | conflict`` lines, or else ``Group N:`` blocks; None when there is neither."""
    groups = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("|")]
        numbers = [n for n in cited_numbers(line) if 1 <= n <= sources]
        if len(fields) < 3 or not numbers:
            continue
        groups.append(Group.model_construct(statement=strip_citations(fields[0]), answer=strip_citations(fields[1]),
                                            sources=numbers, conflict="conflict" in line.lower().split("|")[-1]))
    groups = groups or read_group_blocks(text, sources)
    return Consolidated.model_construct(groups=groups[:MAX_GROUPS]) if groups else None


_GROUP_HEAD = re.compile(r"^\W*group\s*\d+\b", re.IGNORECASE)
_LABELLED = re.compile(r"^[\s*•-]*(?P<label>[^:|]{1,40}?)\s*:\s*(?P<value>.*)$")


def read_group_blocks(text: str, sources: int) -> list[Group]:
    """``Group N:`` blocks, the shape the 1.5B model writes for most questions instead of one line per group: a
    head line (often naming the sources), labelled lines for what the group states and its answer, a line of
    source numbers, a consistent / conflict word. Only the head, lines labelled as sources and lines that start
    with a number in brackets give sources (a block may quote a passage, with numbers of its own); a block
    without an answer or a source is not a group."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _GROUP_HEAD.match(line):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    groups = []
    for head, *rest in blocks:
        found = {"statement": "", "answer": ""}
        numbers, conflict = cited_numbers(head), False
        for line in rest:
            labelled = _LABELLED.match(line)
            label = labelled["label"].lower() if labelled else ""
            key = "answer" if "answer" in label else "statement" if "state" in label else None
            if key and labelled:
                found[key] = found[key] or strip_citations(labelled["value"]).strip()
            if "source" in label or line.lstrip(" -*•").startswith("["):
                numbers += cited_numbers(line)
            conflict |= re.split(r"[:|]", line)[-1].strip().lower().startswith("conflict")
        numbers = [n for n in dict.fromkeys(numbers) if 1 <= n <= sources]
        if found["answer"] and numbers:
            groups.append(Group.model_construct(statement=found["statement"] or found["answer"],
                                                answer=found["answer"], sources=numbers, conflict=conflict))
    return groups


def read_choice_lines(text: str, groups: int) -> Choice:
    kept, reason = labelled_line(text, "reason")
    return Choice.model_construct(answers=read_part_lines(kept, groups).answers, reason=reason)


class AstuteRagMethod(Method):
    name: ClassVar[str] = "astute-rag"
    paper: ClassVar[str] = "peer"
    description: ClassVar[str] = "the model's own knowledge beside the documents, consolidated by source; most reliable answer"
    calls: ClassVar[str] = "1 recall + astute.iterations consolidations + 1 choice"
    default_metrics: ClassVar[tuple[str, ...]] = CONFLICT_METRICS

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        cfg = self.settings.section(AstuteConfig)
        step = AstuteStep()
        step.internal = await self._recall(question.text, step)
        # each item: (text shown, the sources it stands for: passage ids and memory-N)
        items = [(f"(retrieved) {clip_words(h.passage.text, self.settings.methods.passage_words)}", [h.passage.id])
                 for h in passages]
        items += [(f"(memory) {text}", [f"memory-{n}"]) for n, text in enumerate(step.internal, 1)]
        groups = [SourceGroup(statement=text, answer="", sources=ids) for text, ids in items]
        for _ in range(cfg.iterations):
            if not items:
                break
            groups = await self._consolidate(question.text, items, step)
            step.rounds.append(groups)
            items = [(f"({_origin(g.sources)}) {g.statement} Answer: {g.answer}", g.sources) for g in groups]
        parts = await self._choose(question.text, groups, step) if groups else []
        record_step(step)
        parts = merge_parts(parts)
        text, citations = render(parts, passages)
        return MethodOutput(text, citations, unknown=not parts, parts=parts)

    async def _recall(self, question: str, step: AstuteStep) -> list[str]:
        n = self.settings.section(AstuteConfig).internal_passages
        if n == 0:
            return []
        budget = self.settings.section(AstuteConfig).passage_tokens
        with stage("recall"):
            reply = await self.llm.adecide(Decision(
                reply=MemoryPassages, json_messages=recall_messages(question, n, as_json=True), json_tokens=budget,
                text_messages=recall_messages(question, n), text_tokens=budget,
                parse_text=lambda text: read_recall_lines(text, n)))
        step.unreadable += reply is None
        return [p.strip() for p in (reply.passages if reply else []) if p.strip() and not is_unknown(p)][:n]

    async def _consolidate(self, question: str, items: list[tuple[str, list[str]]],
                           step: AstuteStep) -> list[SourceGroup]:
        """One round; an unreadable reply leaves every source its own group (counted)."""
        shown = "\n".join(f"[{n}] {text}" for n, (text, _) in enumerate(items, 1))
        budget, count = self.settings.section(AstuteConfig).consolidate_tokens, len(items)
        with stage("consolidate"):
            reply = await self.llm.adecide(Decision(
                reply=consolidated_reply(count), json_messages=consolidate_messages(question, shown, as_json=True),
                json_tokens=budget, text_messages=consolidate_messages(question, shown), text_tokens=budget,
                parse_text=lambda text: read_group_lines(text, count)))
        if reply is None or not reply.groups:
            step.unreadable += reply is None
            return [SourceGroup(statement=text, answer="", sources=ids) for text, ids in items]
        return [SourceGroup(statement=g.statement, answer=g.answer, conflict=g.conflict,
                            sources=list(dict.fromkeys(s for n in g.sources if 1 <= n <= count for s in items[n - 1][1])))
                for g in reply.groups]

    async def _choose(self, question: str, groups: list[SourceGroup], step: AstuteStep) -> list[AnswerPart]:
        shown = "\n".join(f"[{n}] ({_origin(g.sources)}{'; conflicting' if g.conflict else ''}) {g.statement}"
                          + (f" Answer: {g.answer}" if g.answer else "") for n, g in enumerate(groups, 1))
        budget, count = self.settings.section(AstuteConfig).answer_tokens, len(groups)
        with stage("generate"):
            reply = await self.llm.adecide(Decision(
                reply=choice_reply(count), json_messages=choose_messages(question, shown, as_json=True),
                json_tokens=budget + 32, text_messages=choose_messages(question, shown), text_tokens=budget,
                parse_text=lambda text: read_choice_lines(text, count)))
        if reply is None:
            step.unreadable += 1
            return []
        parts = []
        for part in reply.answers:
            chosen = [n for n in part.contexts if 1 <= n <= count]
            step.chosen_groups += [n for n in chosen if n not in step.chosen_groups]
            retrieved = [s for n in chosen for s in groups[n - 1].sources if not s.startswith("memory-")]
            if part.answer.strip() and not is_unknown(part.answer):
                parts.append(AnswerPart(answer=part.answer.strip(), descriptor=part.about.strip(),
                                        citations=list(dict.fromkeys(retrieved))))
        step.chosen, step.reason = parts, reply.reason
        return parts


def _origin(sources: list[str]) -> str:
    retrieved = sum(not s.startswith("memory-") for s in sources)
    memory = len(sources) - retrieved
    return ", ".join(x for x in (f"{retrieved} retrieved" if retrieved else "", f"{memory} memory" if memory else "")
                     if x) or "no source"

