"""Put a question in plural form, so a group of contexts is answered with all its answers.

The paper found plural questions the best cue for multiple answers. Two ways: a few
rewrite rules (free) or one LLM call per question (cached); which is better is measured.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, Field

from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision
from tanglerag.methods.corg.prompts import plural_messages
from tanglerag.text import first_answer_line

_BE = {"is": "are", "was": "were", "does": "do", "has": "have"}
_WH = r"(what|which|who|whom|where|when|how \w+)"
_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    # "What sport is X associated with?" -> "What sports are X associated with?"
    (re.compile(r"^(what|which) (\w+) (is|was|does|has)\b", re.IGNORECASE),
     lambda m: f"{m[1]} {_plural_noun(m[2])} {_BE[m[3].lower()]}"),
    # "Who is the (current) director of X?" -> "Who are the (current) directors of X?": only the head noun
    # before "of" / "in" / "associated" is a common noun; "the Zook House" must stay as it is
    (re.compile(rf"^{_WH} (is|was) the ((?:\w+ )?)(\w+)(?= (?:of|in|associated)\b)", re.IGNORECASE),
     lambda m: f"{m[1]} {_BE[m[2].lower()]} the {m[3]}{_plural_noun(m[4])}"),
    # "When was (the) X born?" -> "When were all the X born?"
    (re.compile(rf"^{_WH} (is|was|does|has)(?: the)?\b", re.IGNORECASE),
     lambda m: f"{m[1]} {_BE[m[2].lower()]} all the"),
]


def _plural_noun(noun: str) -> str:
    if noun.lower().endswith("s"):
        return noun
    if noun.lower().endswith("y") and noun[-2:-1].lower() not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def plural_by_rule(question: str) -> str:
    for pattern, rewrite in _RULES:
        match = pattern.match(question)
        if match:
            return rewrite(match) + question[match.end():]
    return question.rstrip("?").rstrip() + "? Give all the answers."


class Rewritten(BaseModel):
    question: str = Field(max_length=300)


def _read_rewrite(text: str) -> Rewritten | None:
    """A rewrite is usable when it is a question of at least three words."""
    rewritten = first_answer_line(text).strip().strip('"')
    return Rewritten(question=rewritten) if rewritten.endswith("?") and len(rewritten.split()) >= 3 else None


async def plural_by_llm(llm: LLM, question: str) -> str:
    """One short call; falls back to the rules when the model returns nothing usable."""
    reply = await llm.adecide(Decision(reply=Rewritten, json_messages=plural_messages(question, as_json=True),
                                       json_tokens=64, text_messages=plural_messages(question), text_tokens=48,
                                       parse_text=_read_rewrite), llm.params(stop=["\n"]))
    usable = _read_rewrite(reply.question) if reply is not None else None
    return usable.question if usable is not None else plural_by_rule(question)
