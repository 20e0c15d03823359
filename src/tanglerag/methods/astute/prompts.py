"""Astute RAG's prompts, in our words: (a) recall what the model knows, (b) consolidate sources marked as retrieved
or as the model's memory into groups that agree, flagging conflicts and leaving out what is irrelevant, (c) choose
the answer whose support is most reliable (for a name with several referents, one answer per referent). Each as
text lines or, under ``llm.structured``, JSON."""

from __future__ import annotations

from tanglerag.llm.base import with_worked_example
from tanglerag.trace import Message

RECALL_SYSTEM = (
    "You write what you know, from memory, that helps answer a question: up to {n} short factual passages. Write "
    "only what you are confident is true; if you know nothing useful, write none."
)
RECALL_TEXT = "Write each passage on its own line, starting with 'Passage:'. Write none if you know nothing."
RECALL_JSON = 'Reply with JSON: {{"passages": ["...", "..."]}}, an empty list if you know nothing useful.'

CONSOLIDATE_SYSTEM = (
    "You consolidate numbered sources about a question. Each is marked as retrieved (from a document search, "
    "which may be wrong or off-topic) or memory (from the model's own knowledge, which may be outdated or wrong). "
    "Group the sources that agree, say in one sentence what each group states and what answer it gives, flag a "
    "group that conflicts with another, and leave out sources that are not about the question. A name may refer "
    "to several people or things: sources about different ones are not in conflict."
)
CONSOLIDATE_TEXT = (
    "Write one line per group: what the group states | its answer | [source numbers] | conflict or consistent\n"
    "For example:\nThe river flows through Vienna | the Danube | [1][3] | consistent\nGroups:"
)
CONSOLIDATE_JSON = (
    'Reply with JSON: {"groups": [{"statement": "what the group states", "answer": "its answer", '
    '"sources": [source numbers], "conflict": true or false}]}'
)

CHOOSE_SYSTEM = (
    "You choose the final answer to a question from consolidated groups of sources. Prefer the group whose "
    "support is most reliable: several agreeing sources over one, retrieved sources that agree with memory over "
    "either alone, and no group flagged as conflicting if a consistent one answers. If the groups are about "
    "different people or things with the same name, give the answer for each."
)
CHOOSE_TEXT = (
    "List every answer you choose, one per line, as: answer | which one it is about | [group numbers]\n"
    "Then a last line starting with Reason: one sentence on why these groups are the most reliable.\n"
    "Write unknown if no group answers the question."
)
# The worked exchange shown before the real one (llm.base.with_worked_example).
CHOOSE_EXAMPLE_ASKED = (
    "Groups:\n[1] (2 retrieved) Michael Jordan the basketball player was born in 1963 Answer: 1963\n"
    "[2] (1 retrieved) Michael I. Jordan the scientist was born in 1956 Answer: 1956\n"
    "[3] (1 memory, conflict) Michael Jordan the basketball player was born in 1998 Answer: 1998\n\n"
    "Question: When was Michael Jordan born?\n"
)
CHOOSE_EXAMPLE_REPLY = (
    "1963 | the basketball player | [1]\n1956 | the scientist | [2]\n"
    "Reason: group 1 has two agreeing sources against the conflicting group 3; group 2 is a different person."
)
CHOOSE_JSON = (
    'Reply with JSON: {"answers": [{"answer": "...", "about": "which one it is about", "contexts": [group '
    'numbers]}], "reason": "one sentence on why these groups are the most reliable"}. If no group answers the '
    'question, give one entry with "answer": "unknown".'
)


def recall_messages(question: str, n: int, *, as_json: bool = False) -> list[Message]:
    task = RECALL_JSON.format() if as_json else RECALL_TEXT
    return [Message(role="system", content=RECALL_SYSTEM.format(n=n)),
            Message(role="user", content=f"Question: {question}\n{task}")]


def consolidate_messages(question: str, sources: str, *, as_json: bool = False) -> list[Message]:
    user = f"Sources:\n{sources}\n\nQuestion: {question}\n{CONSOLIDATE_JSON if as_json else CONSOLIDATE_TEXT}"
    return [Message(role="system", content=CONSOLIDATE_SYSTEM), Message(role="user", content=user)]


def choose_messages(question: str, groups: str, *, as_json: bool = False) -> list[Message]:
    task = CHOOSE_JSON if as_json else CHOOSE_TEXT
    user = f"Groups:\n{groups}\n\nQuestion: {question}\n{task}"
    if as_json:
        return [Message(role="system", content=CHOOSE_SYSTEM), Message(role="user", content=user)]
    return with_worked_example(CHOOSE_SYSTEM, (CHOOSE_EXAMPLE_ASKED + task, CHOOSE_EXAMPLE_REPLY), user)
