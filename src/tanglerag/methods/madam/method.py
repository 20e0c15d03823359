"""MADAM-RAG: one agent per document, an aggregator, and rounds of debate between them.

Round 1: each agent answers from its document alone (one batch, ``adecide_many``: parallel on a server); the
aggregator reads every agent's answer and reason and keeps each entity's supported answer. Later rounds: each
agent sees the other agents' answers and the aggregator's summary and may revise. A round in which no agent
changes its answer ends the debate, and the last aggregation stands. The answer is in COrg's multi-answer shape,
each answer citing the documents whose agents the aggregator named.
"""

from __future__ import annotations

import re
from functools import cache
from typing import ClassVar

from pydantic import BaseModel, Field, create_model

from tanglerag.llm.structured import Decision
from tanglerag.methods.base import CONFLICT_METRICS, Method, MethodOutput
from tanglerag.methods.madam.config import MadamConfig
from tanglerag.methods.madam.prompts import agent_messages, aggregator_messages
from tanglerag.methods.madam.steps import AgentTurn, DebateRound, DebateStep
from tanglerag.stages.multi_answer import (
    Parts,
    bounded_answers,
    labelled_line,
    merge_parts,
    parts_of,
    read_part_lines,
    render,
)
from tanglerag.text import clip_words, first_answer_line, is_unknown, normalize_answer
from tanglerag.tracking import record_step, stage
from tanglerag.types import Question, RetrievedPassage


class AgentReply(BaseModel):
    answer: str = Field(max_length=120)
    reason: str = Field(max_length=300)


class Aggregation(Parts):
    summary: str = Field(max_length=400)


@cache
def aggregation_reply(agents: int) -> type[Aggregation]:
    """Agent numbers bounded to the agents there are (the bounded parts of ``parts_reply``), then the summary."""
    return create_model("BoundedAggregation", __base__=Aggregation,
                        answers=bounded_answers(agents))


_FIELD = re.compile(r"^\W*(answer|reason|explanation)\s*:\s*(.*)$", re.IGNORECASE)


def read_agent_lines(text: str) -> AgentReply | None:
    """``Answer: ...`` and ``Reason: ...`` lines (or both on one line); a reply without them is read as its first
    line (a small model often answers in a sentence); None when it is empty."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _FIELD.match(line.strip())
        if match:
            key = "reason" if match[1].lower() != "answer" else "answer"
            head, _, tail = match[2].partition("Reason:") if key == "answer" else (match[2], "", "")
            found.setdefault(key, head.strip())
            if tail:
                found.setdefault("reason", tail.strip())
    answer = first_answer_line(found.get("answer") or text)  # no Answer: line: the first line is the answer
    if not answer:
        return None
    return AgentReply.model_construct(answer=answer.rstrip("."), reason=found.get("reason", ""))


def read_aggregation_lines(text: str, agents: int) -> Aggregation:
    kept, summary = labelled_line(text, "summary")
    return Aggregation.model_construct(answers=read_part_lines(kept, agents).answers, summary=summary)


class MadamRagMethod(Method):
    name: ClassVar[str] = "madam-rag"
    paper: ClassVar[str] = "peer"
    description: ClassVar[str] = "one agent per document, an aggregator, debate rounds that stop when no agent moves"
    calls: ClassVar[str] = "(documents + 1) per round, up to madam.rounds rounds"
    default_metrics: ClassVar[tuple[str, ...]] = CONFLICT_METRICS

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return MethodOutput.abstain()
        step = DebateStep()
        turns: list[AgentTurn] | None = None
        kept = DebateRound(agents=[], aggregated=False)
        for number in range(1, self.settings.section(MadamConfig).rounds + 1):
            turns = await self._agents(question.text, passages, turns, kept.summary)
            if number > 1 and not any(t.changed for t in turns):
                step.rounds.append(DebateRound(agents=turns, aggregated=False))
                step.stopped = f"no agent changed its answer in round {number}"
                break
            kept = await self._aggregate(question.text, passages, turns)
            step.rounds.append(kept)
        step.stopped = step.stopped or f"the last of {self.settings.section(MadamConfig).rounds} round(s)"
        record_step(step)
        parts = merge_parts(kept.kept)
        text, citations = render(parts, passages)
        return MethodOutput(text, citations, unknown=not parts, parts=parts)

    async def _agents(self, question: str, passages: list[RetrievedPassage], before: list[AgentTurn] | None,
                      summary: str) -> list[AgentTurn]:
        """Every agent's answer this round; ``before``: last round's turns (None in the first round)."""
        words, budget = self.settings.methods.passage_words, self.settings.section(MadamConfig).agent_tokens
        decisions = []
        for i, hit in enumerate(passages):
            others = None if before is None else "\n".join(
                f"Agent {j}: {t.answer}. {t.reason}" for j, t in enumerate(before, 1) if j != i + 1)
            document = clip_words(hit.passage.text, words)
            decisions.append(Decision(
                reply=AgentReply, json_messages=agent_messages(question, document, others, summary, as_json=True),
                json_tokens=budget + 16, text_messages=agent_messages(question, document, others, summary),
                text_tokens=budget, parse_text=read_agent_lines))
        with stage("debate"):
            replies = await self.llm.adecide_many(decisions)
        turns = []
        for i, (hit, reply) in enumerate(zip(passages, replies, strict=True)):
            answer = reply.answer.strip() if reply is not None and reply.answer.strip() else "unknown"
            previous = before[i].answer if before is not None else None
            turns.append(AgentTurn(passage_id=hit.passage.id, answer=answer, reason=reply.reason if reply else "",
                                   changed=previous is not None and not _same(previous, answer),
                                   unreadable=reply is None))
        return turns

    async def _aggregate(self, question: str, passages: list[RetrievedPassage], turns: list[AgentTurn]) -> DebateRound:
        agents = len(turns)
        listed = "\n".join(f"Agent {j}: {t.answer}. {t.reason}".strip() for j, t in enumerate(turns, 1))
        budget = self.settings.section(MadamConfig).aggregator_tokens
        with stage("aggregate"):
            reply = await self.llm.adecide(Decision(
                reply=aggregation_reply(agents), json_messages=aggregator_messages(question, listed, as_json=True),
                json_tokens=budget + 32, text_messages=aggregator_messages(question, listed), text_tokens=budget,
                parse_text=lambda text: read_aggregation_lines(text, agents)))
        if reply is None:
            return DebateRound(agents=turns, summary="(the aggregator's reply could not be read)")
        return DebateRound(agents=turns, kept=parts_of(reply, passages, None), summary=reply.summary)


def _same(before: str, now: str) -> bool:
    """An agent kept its answer: the same after normalisation, or one contains the other ("1963" / "in 1963")."""
    a, b = normalize_answer(before), normalize_answer(now)
    return a == b or (bool(a) and bool(b) and (a in b or b in a)) or (is_unknown(before) and is_unknown(now))

