"""A follow-up made standalone: "and the other one?" after "Who composed String Quintet No. 2?" becomes a question
that retrieval and every method can answer alone, written by the model from the conversation.

No method keeps a conversation, and none should: retrieval needs one self-contained question, and every method's
prompts and traces are about one question. So the conversation is folded into the question before retrieval, once,
by one short model call (cached like every call, and recorded: the call in the trace's calls under stage
``rewrite``, the decision as a ``followup`` step).

The call is made only when the message reads as depending on earlier turns; most questions typed into a chat stand
alone, and a rewrite costs a model call and may drift. The test is a cheap rule on the message's words, chosen to
miss few follow-ups rather than to spare every call, since a missed follow-up retrieves for the wrong thing while a
needless rewrite costs one cached call and gives the question back: it depends on the history when it

- opens like a continuation ("and ...", "what about ...", "how about ...", "but ...", "also ...", "then ..."),
- refers back: "the other", "the same", "the former", "the latter", "else", "one" after a determiner ("the second
  one", "which one"), a demonstrative (this, that, these, those) that ends the message or follows a verb or a
  preposition ("who wrote that", "is that ...", "in those"; not "the actor that played"), or a third-person pronoun
  (he, she, it, they, his, its, their, them) with no name before it in the message ("When did Brahms write his
  Op. 111?" names whom "his" means),
- or is so short (at most three words) that it can only be an ellipsis ("when?", "in 2010?", "why?").

``conversation.rewrite`` forces the call for every message with history (``always``) or turns it off (``never``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.config import ConversationConfig
from tanglerag.llm.client import LLM
from tanglerag.trace import Message, TraceStep
from tanglerag.tracking import record_step, stage

_OPENERS = ("and", "or", "but", "also", "then", "so", "what about", "how about", "same for", "what else",
            "which one", "who else")
_PRONOUNS = {"he", "she", "it", "its", "it's", "they", "them", "their", "theirs", "his", "her", "hers", "him"}
_REFERS = {"other", "others", "same", "former", "latter", "else"}
_DEMONSTRATIVES = {"this", "that", "these", "those"}
_BEFORE_DEMONSTRATIVE = {"is", "was", "are", "were", "did", "does", "do", "wrote", "made", "about", "of", "for", "in",
                         "on", "at", "with", "to", "from", "by", "after", "before", "like", "than", "and", "or"}
_ONES = {"one", "ones"}
_BEFORE_ONE = {"the", "which", "that", "this", "other", "another", "first", "second", "third", "last", "next",
               "previous", "older", "newer", "earlier", "later", "same"}
_WORDS = re.compile(r"[A-Za-z']+")
_SOURCES = "\n\nSources:"  # a chat answer's numbered sources: not part of what was said

REWRITE_SYSTEM = (
    "You rewrite the last message of a conversation as one standalone question that can be understood without the "
    "conversation. Replace pronouns and references such as 'the other one' with what they refer to in the earlier "
    "turns, and complete elliptical messages ('and in 2010?') from them. Keep the meaning and the language of the "
    "message; do not answer it. If it already stands alone, repeat it unchanged. Reply with the question only, on "
    "one line."
)


MAX_TURN_CHARS = 20_000
"""A turn longer than this is cut when read (the rewrite reads its first ``conversation.turn_words`` words anyway)."""


class Turn(BaseModel):
    """One earlier turn of a conversation: what the user asked or what the assistant answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_TURN_CHARS)


def read_turns(messages: object) -> list[Turn]:
    """Turns from chat messages as OpenAI's clients write them (``[{"role", "content"}]``, content text or a list of
    parts whose text parts are read): system and tool messages and empty ones are left out, long ones cut.
    ``ValueError`` for anything else."""
    if not isinstance(messages, list):
        raise ValueError("expected a list of messages {\"role\": ..., \"content\": ...}")
    turns = []
    for n, message in enumerate(messages, start=1):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"message {n}: expected an object with a role and a content")
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"message {n}: content must be text")
        if message["role"] in ("user", "assistant") and content and content.strip():
            turns.append(Turn(role=message["role"], content=content[:MAX_TURN_CHARS]))
    return turns


class FollowUpStep(TraceStep):
    """How a message with a history became the question answered (or why it was left as it was)."""

    kind: Literal["followup"] = "followup"
    title = "follow-up"
    message: str
    question: str = Field(description="the question retrieval and the method received")
    rewritten: bool = Field(description="a model call rewrote the message")
    reason: str = Field(description="why the message was or was not taken to depend on earlier turns")
    turns: int = Field(description="earlier turns shown to the rewrite")

    def headline(self) -> str | None:
        return f"follow-up read as: {self.question} ({self.reason})" if self.rewritten else None


def depends_on_history(message: str) -> str | None:
    """Why ``message`` needs earlier turns to be understood, or None when it reads as standalone."""
    text = message.strip().lower()
    said = _WORDS.findall(message)
    words = [word.lower() for word in said]
    if not words:
        return None
    opener = next((o for o in _OPENERS if text.startswith(o) and (len(text) == len(o) or not text[len(o)].isalpha())),
                  None)
    if opener is not None:
        return f"opens like a continuation ({opener!r})"
    refers = next((w for i, w in enumerate(words) if _refers(words, i) or (w in _PRONOUNS and not _named(said[1:i]))),
                  None)
    if refers is not None:
        return f"refers back ({refers!r})"
    if len(words) <= 3:
        return f"too short to stand alone ({len(words)} word{'s' * (len(words) != 1)})"
    return None


def _refers(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` points outside the message (by the rules in the module's docstring)."""
    word, before = words[i], words[i - 1] if i else ""
    if word in _DEMONSTRATIVES:
        return i == len(words) - 1 or i == 0 or before in _BEFORE_DEMONSTRATIVE
    if word in _ONES:
        return before in _BEFORE_ONE
    return word in _REFERS


def _named(words: list[str]) -> bool:
    """Whether these words (not the message's first, capitalised anyway) hold a name a pronoun may point to."""
    return any(word[0].isupper() and word != "I" for word in words)


async def standalone(llm: LLM, history: Sequence[Turn], message: str, config: ConversationConfig) -> str:
    """The question to answer for ``message`` after ``history``: the message itself, or the model's standalone
    rewrite of it when it depends on the history. Records a ``followup`` step in the active trace."""
    if not history or config.rewrite == "never":
        reason = "no earlier turns" if not history else "conversation.rewrite=never"
        record_step(FollowUpStep(message=message, question=message, rewritten=False, reason=reason, turns=0))
        return message
    why = "conversation.rewrite=always" if config.rewrite == "always" else depends_on_history(message)
    if why is None:
        record_step(FollowUpStep(message=message, question=message, rewritten=False,
                                 reason="reads as standalone", turns=0))
        return message
    shown = list(history)[-config.max_turns:]
    with stage("rewrite"):
        reply = (await llm.acomplete(rewrite_messages(shown, message, config.turn_words),
                                     llm.params(max_tokens=config.rewrite_tokens, stop=["\n"],
                                                temperature=0.0))).texts[0]
    question = _question_in(reply)
    if not question:
        why = f"{why}; the rewrite was empty, so the message was kept"
    record_step(FollowUpStep(message=message, question=question or message, rewritten=bool(question), reason=why,
                             turns=len(shown)))
    return question or message


def rewrite_messages(history: Sequence[Turn], message: str, turn_words: int) -> list[Message]:
    said = "\n".join(f"{'User' if turn.role == 'user' else 'Assistant'}: {_clipped(turn.content, turn_words)}"
                     for turn in history)
    user = f"Conversation:\n{said}\n\nLast message: {message.strip()}\n\nStandalone question:"
    return [Message(role="system", content=REWRITE_SYSTEM), Message(role="user", content=user)]


def _clipped(text: str, words: int) -> str:
    """A turn as the rewrite reads it: one line, without a chat answer's source list, at most ``words`` words."""
    kept = text.split(_SOURCES, 1)[0].split()
    return " ".join(kept[:words]) + (" ..." if len(kept) > words else "")


def _question_in(reply: str) -> str:
    """The question in the model's reply: its first line, without a label or quotes it may have added."""
    line = next((part.strip() for part in reply.splitlines() if part.strip()), "")
    line = re.sub(r"^(standalone question|question|rewritten question)\s*:\s*", "", line, flags=re.IGNORECASE)
    return line.strip().strip('"“”\'').strip()
