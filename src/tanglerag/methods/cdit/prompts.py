"""CDIT's consistency judge prompts (paper 003), in our own words.

The rule part says what a Context Matching Dependency demands of a passage that matches the question
(phi1: the same subject, predicate and object; phi1+phi2: also the same attributives and adverbials) and
warns about look-alike predicates with opposite meanings; the model answers with one word. The question
comes before the passage, so the judgments of one question share the prompt prefix in llama.cpp.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tanglerag.trace import Message

_PHI1 = ("A passage matches the question only when the passage and the question speak of the same subject, the same "
         "predicate (the action or relation) and the same object.")
_PHI2 = (" Their modifiers must agree too: the attributes that say which one or what kind, and the adverbials that "
         "say when, where or how.")
_TRAP = (" Be careful with predicates that look alike but mean the opposite, such as switched on / switched off, won "
         "/ lost, joined / left: they make a passage not match.")


def judge_system(cmd: str) -> str:
    rule = _PHI1 + (_PHI2 if cmd == "phi1+phi2" else "") + _TRAP
    return f"You are a careful checker of whether a text passage matches a question. Rule: {rule}"


_ONE_WORD = "Reply with one word, True or False."
_ONE_JSON = 'Reply with JSON: {"match": true} or {"match": false}.'


def judge_messages(cmd: str, question: str, passage: str, *, as_json: bool = False) -> list[Message]:
    user = (f"Question: {question}\n\nPassage: {passage}\n\n"
            f"Does the passage match the question under the rule? {_ONE_JSON if as_json else _ONE_WORD}")
    return [Message(role="system", content=judge_system(cmd)), Message(role="user", content=user)]


class VerdictReply(BaseModel):
    match: bool


BATCH_LINE_TOKENS = 4  # what a batched reply spends per passage beside the verdict: "12: " and a newline


def judge_batch_messages(cmd: str, question: str, numbered_passages: str, count: int, *,
                         as_json: bool = False) -> list[Message]:
    reply = ("Reply with JSON, one key per passage (passage_1 for [1]) with true or false." if as_json else
             "Reply with one line per passage, as: number: True or number: False.")
    user = (f"Question: {question}\n\nPassages:\n{numbered_passages}\n\n"
            f"For each of the {count} passages, does it match the question under the rule? {reply}")
    return [Message(role="system", content=judge_system(cmd)), Message(role="user", content=user)]


_WORD = re.compile(r"\b(true|false|yes|no)\b", re.IGNORECASE)


def parse_verdict(reply: str) -> bool | None:
    """True/False from the first such word (yes/no accepted); None when the reply has neither."""
    found = _WORD.search(reply)
    return None if found is None else found.group(1).lower() in {"true", "yes"}


def parse_verdict_lines(reply: str, count: int) -> list[bool | None]:
    """One verdict per numbered line; passages without a readable line get None."""
    verdicts: list[bool | None] = [None] * count
    for line in reply.splitlines():
        numbered = re.match(r"\s*\[?(\d+)\]?\s*[:.)-]\s*(.*)", line)
        if numbered and 1 <= int(numbered.group(1)) <= count:
            verdicts[int(numbered.group(1)) - 1] = parse_verdict(numbered.group(2))
    return verdicts
