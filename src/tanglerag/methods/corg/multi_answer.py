"""COrg's multi-answer call: one group of contexts in, every distinct answer out (the shape lives in
``stages/multi_answer``). COrg and its baselines differ in which contexts go into which call, not in how a call is
asked or read."""

from __future__ import annotations

from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision
from tanglerag.methods.corg.prompts import multi_answer_messages
from tanglerag.stages.multi_answer import MAX_PARTS, parts_of, parts_reply, parts_so_far, read_part_lines
from tanglerag.text import number_passages
from tanglerag.types import AnswerPart, RetrievedPassage


async def ask_group(llm: LLM, question: str, passages: list[RetrievedPassage], group: int | None,
                    max_tokens: int, passage_words: int | None) -> list[AnswerPart]:
    """One call over ``passages`` numbered from 1 (no titles, as every COrg-family prompt shows them)."""
    block = number_passages(passages, passage_words, title_sep=None)
    shown = len(passages)
    reply = await llm.adecide(Decision(reply=parts_reply(shown),
                                       json_messages=multi_answer_messages(question, block, as_json=True),
                                       json_tokens=max_tokens + 16 * MAX_PARTS,
                                       text_messages=multi_answer_messages(question, block), text_tokens=max_tokens,
                                       parse_text=lambda text: read_part_lines(text, shown),
                                       shown=parts_so_far))
    return parts_of(reply, passages, group) if reply is not None else []
