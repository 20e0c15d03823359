"""Prompts of Diva (paper 001) and its baselines, in our words after the paper's structure, and their parsers.

Each task is short and asks for short lines, so the small local model can follow it and the parsers can
read what it writes leniently: a reply that cannot be read leaves the method on a safe path (the question
taken as unambiguous, a passage set counted as not covering an interpretation), never a crash.
Few-shot demonstrations, when given, come from a demo pool (``Demo``) and go before the actual question.
Each decision (ambiguity, interpretations, verification, clarifications) also has a reply model and a prompt
asking for it as JSON (``llm.structured``); the long answer stays free text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, Field

from tanglerag.text import normalize_answer
from tanglerag.trace import Message

AmbiguityType = Literal["subject", "object", "predicate", "time", "location", "none"]
AMBIGUITY_TYPES: tuple[AmbiguityType, ...] = get_args(AmbiguityType)[:-1]


@dataclass(frozen=True)
class Demo:
    """One worked example: a question, its interpretations (specific questions) with short answers, a long answer."""

    question: str
    interpretations: tuple[tuple[str, str], ...]  # (specific question, short answer)
    long_answer: str


BUILTIN_DEMO = Demo(
    question="Who won the Ballon d'Or in 2018?",
    interpretations=(("Which man won the Ballon d'Or in 2018?", "Luka Modric"),
                     ("Which woman won the Ballon d'Or in 2018?", "Ada Hegerberg")),
    long_answer=("In 2018 the Ballon d'Or was given to a man and, for the first time, to a woman. Luka Modric of "
                 "Croatia won the men's award, and the Norwegian striker Ada Hegerberg won the first women's award."),
)

AMBIGUITY_SYSTEM = (
    "A question can be ambiguous: it may have several answers depending on how it is read. Say which part makes "
    f"it ambiguous, choosing from: {', '.join(AMBIGUITY_TYPES)}, or none. Write two lines:\n"
    "Reason: one sentence on what could be read in more than one way\n"
    "Types: the type names, separated by commas\n"
    "Example. Question: Who won the Ballon d'Or in 2018?\n"
    "Reason: The award has a men's and a women's edition, so 'who' can mean either winner.\n"
    "Types: subject"
)


AMBIGUITY_JSON_SYSTEM = AMBIGUITY_SYSTEM.split("Write two lines:")[0] + (
    "Reply with JSON: a reason, one sentence on what could be read in more than one way, then the types.\n"
    "Example. Question: Who won the Ballon d'Or in 2018?\n"
    '{"reason": "The award has a men\'s and a women\'s edition, so \'who\' can mean either winner.", '
    '"types": ["subject"]}'
)


class Ambiguity(BaseModel):
    reason: str = Field(max_length=300)
    types: list[AmbiguityType] = Field(max_length=len(AMBIGUITY_TYPES))

    def named_types(self) -> list[str]:
        return list(dict.fromkeys(t for t in self.types if t != "none"))


def ambiguity_messages(question: str, *, as_json: bool = False) -> list[Message]:
    return [Message(role="system", content=AMBIGUITY_JSON_SYSTEM if as_json else AMBIGUITY_SYSTEM),
            Message(role="user", content=f"Question: {question}")]


def read_ambiguity(reply: str) -> Ambiguity | None:
    """Types and reason from text lines; unknown words are ignored; None when neither line is there."""
    reason: str | None = None
    types: list[AmbiguityType] | None = None
    for line in reply.splitlines():
        head, _, rest = line.partition(":")
        key = head.strip().lower().lstrip("#* ")
        if key.startswith("reason") and not reason:
            reason = rest.strip()
        elif key.startswith("type"):
            words = re.findall(r"[a-z]+", rest.lower())
            types = (types or []) + [t for t in AMBIGUITY_TYPES if any(w.startswith(t[:4]) for w in words)
                                     and t not in (types or [])]
    if reason is None and types is None:
        return None
    return Ambiguity.model_construct(reason=(reason or "")[:300], types=types or [])


INTERPRETATION_SYSTEM = (
    "You rewrite an ambiguous question into the specific questions it could mean, one per reading, using the "
    "reason it is ambiguous. Each rewritten question must have a single answer. Write one per line, numbered:\n"
    "1: first specific question\n2: second specific question"
)


def _demo_block(demos: list[Demo], with_answers: bool) -> str:
    blocks = []
    for demo in demos:
        lines = [f"Question: {demo.question}"]
        for n, (question, answer) in enumerate(demo.interpretations, 1):
            lines.append(f"{n}: {question}" + (f" -> {answer}" if with_answers else ""))
        if with_answers:
            lines.append(f"Answer: {demo.long_answer}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


INTERPRETATION_JSON_SYSTEM = INTERPRETATION_SYSTEM.split("Write one per line")[0] + (
    'Reply with JSON: {"questions": ["first specific question", "second specific question"]}'
)


class Interpretations(BaseModel):
    questions: list[str] = Field(max_length=8)


def interpretation_messages(question: str, reason: str, demos: list[Demo], *, as_json: bool = False) -> list[Message]:
    examples = _demo_block(demos or [BUILTIN_DEMO], with_answers=False)
    why = f"Reason: {reason}\n" if reason else ""
    user = f"Examples:\n{examples}\n\nQuestion: {question}\n{why}Specific questions:"
    system = INTERPRETATION_JSON_SYSTEM if as_json else INTERPRETATION_SYSTEM
    return [Message(role="system", content=system), Message(role="user", content=user)]


_NUMBERED = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):]|dq\s*\d+\s*:)\s*(.+)$", re.IGNORECASE)


def read_interpretation_lines(reply: str) -> Interpretations | None:
    """The numbered or bulleted lines of a text reply; None when there is none."""
    found = []
    for line in reply.splitlines():
        match = _NUMBERED.match(line)
        if match:
            found.append(match.group(1).split("->")[0].strip().strip('"'))
    return Interpretations.model_construct(questions=found) if found else None


def usable_interpretations(found: list[str], question: str, limit: int) -> list[str]:
    """Questions of three words or more, without repeats or the question itself, at most ``limit``."""
    seen = {normalize_answer(question)}
    usable = []
    for text in found:
        text = text.strip()
        if len(text.split()) < 3 or normalize_answer(text) in seen:
            continue
        seen.add(normalize_answer(text))
        usable.append(text if text.endswith("?") else f"{text}?")
        if len(usable) == limit:
            break
    return usable


def parse_interpretations(reply: str, question: str, limit: int) -> list[str]:
    read = read_interpretation_lines(reply)
    return usable_interpretations(read.questions, question, limit) if read is not None else []


VERIFY_SYSTEM = (
    "You check whether numbered passages contain the answer to a question. Reply with one word: yes or no."
)
VERIFY_BATCH_SYSTEM = (
    "You check whether numbered passages contain the answer to each of several questions. Reply with one line "
    "per question: its number, a colon, and yes or no. Example:\n1: yes\n2: no"
)


VERIFY_JSON_SYSTEM = (
    'You check whether numbered passages contain the answer to a question. Reply with JSON: {"contains_answer": '
    'true} or {"contains_answer": false}.'
)
VERIFY_BATCH_JSON_SYSTEM = (
    "You check whether numbered passages contain the answer to each of several questions. Reply with JSON with "
    'one key per question number, true or false. Example: {"question_1": true, "question_2": false}'
)


class Coverage(BaseModel):
    contains_answer: bool


def verify_messages(block: str, interpretation: str, *, as_json: bool = False) -> list[Message]:
    """The passages first: the calls for one question's interpretations share them as a prefix."""
    user = f"Passages:\n{block}\n\nQuestion: {interpretation}\nDo the passages contain its answer?"
    return [Message(role="system", content=VERIFY_JSON_SYSTEM if as_json else VERIFY_SYSTEM),
            Message(role="user", content=user)]


def verify_batch_messages(block: str, interpretations: list[str], *, as_json: bool = False) -> list[Message]:
    listed = "\n".join(f"{n}: {q}" for n, q in enumerate(interpretations, 1))
    user = f"Passages:\n{block}\n\nQuestions:\n{listed}\n\nFor each question, do the passages contain its answer?"
    return [Message(role="system", content=VERIFY_BATCH_JSON_SYSTEM if as_json else VERIFY_BATCH_SYSTEM),
            Message(role="user", content=user)]


def read_coverage(reply: str) -> Coverage | None:
    verdict = parse_yes_no(reply)
    return Coverage(contains_answer=verdict) if verdict is not None else None


def parse_yes_no(reply: str) -> bool | None:
    words = re.findall(r"[a-z]+", reply.lower())
    for word in words:
        if word in {"yes", "true"}:
            return True
        if word in {"no", "false", "not"}:
            return False
    return None


def parse_yes_no_lines(reply: str, n: int) -> list[bool | None]:
    """One verdict per question number 1..n; a number missing from the reply is None."""
    verdicts: list[bool | None] = [None] * n
    for line in reply.splitlines():
        match = re.match(r"^\W*(\d+)\W+(.*)$", line.strip())
        if match and 1 <= int(match.group(1)) <= n and verdicts[int(match.group(1)) - 1] is None:
            verdicts[int(match.group(1)) - 1] = parse_yes_no(match.group(2))
    return verdicts


LONG_ANSWER_SYSTEM = (
    "You answer an ambiguous question that has several readings. First list each reading as a specific "
    "question with its short answer, one per numbered line: 1: specific question -> short answer. Then write "
    "'Answer:' and a paragraph of at least three sentences that explains the readings and gives every answer."
)
RAG_NOTE = " Use the numbered passages and cite them as [n] after the facts they give."
CLOSED_BOOK_NOTE = " Use what you know."


def long_answer_messages(question: str, demos: list[Demo], block: str | None = None,
                         interpretations: list[str] | None = None) -> list[Message]:
    """RAG when ``block`` (numbered passages) is given, closed-book otherwise; ``interpretations`` are hints
    (query refinement) the model may use as interpretations."""
    system = LONG_ANSWER_SYSTEM + (RAG_NOTE if block is not None else CLOSED_BOOK_NOTE)
    parts = [f"Example:\n{_demo_block(demos or [BUILTIN_DEMO], with_answers=True)}"]
    if block is not None:
        parts.append(f"Passages:\n{block}")
    hint = ""
    if interpretations:
        hint = "Possible readings:\n" + "\n".join(f"- {q}" for q in interpretations) + "\n"
    parts.append(f"{hint}Question: {question}\nReadings:")
    return [Message(role="system", content=system), Message(role="user", content="\n\n".join(parts))]


_ANSWERED_QUESTION = re.compile(r"^\s*(?:(?:dq\s*)?(?:\d+|n)\s*[:.)]|[-*•])\s*(.+?)\s*(?:->|=>|→)\s*(.+)$", re.IGNORECASE)


def parse_long_answer(reply: str) -> tuple[list[tuple[str, str]], str]:
    """(interpretations as (question, short answer), the paragraph). Without an 'Answer:' line the whole reply,
    minus interpretation lines, is the paragraph."""
    interpretations, rest = [], []
    paragraph = None
    for line in reply.splitlines():
        stripped = line.strip()
        if paragraph is not None:
            paragraph.append(stripped)
            continue
        if re.match(r"^\W*answer\s*:", stripped, re.IGNORECASE):
            paragraph = [stripped.split(":", 1)[1].strip()]
            continue
        match = _ANSWERED_QUESTION.match(stripped)
        if match:
            interpretations.append((match.group(1).strip(), match.group(2).strip()))
        elif stripped:
            rest.append(stripped)
    text = " ".join(p for p in (paragraph if paragraph is not None else rest) if p)
    return interpretations, text.strip()


CLARIFY_SYSTEM = (
    "You read passages about an ambiguous question and find its readings. Write each reading the passages "
    "support as a specific question with its short answer, one per numbered line: 1: specific question -> short "
    "answer. Write nothing else."
)


CLARIFY_JSON_SYSTEM = CLARIFY_SYSTEM.split("Write each reading")[0] + (
    "Reply with JSON: under readings, each reading the passages support as a specific question with its short "
    'answer. Example: {"readings": [{"question": "Which man won the Ballon d\'Or in 2018?", "answer": "Luka '
    'Modric"}]}'
)


# a reply model's docstring would go into its JSON schema, and so to the model: comments instead
class Clarification(BaseModel):  # one specific question a node's question may mean, with its short answer (ToC)
    question: str = Field(max_length=200)
    answer: str = Field(max_length=120)


class Clarifications(BaseModel):
    readings: list[Clarification] = Field(max_length=8)  # the JSON key the prompts ask for


def clarify_messages(question: str, block: str, *, as_json: bool = False) -> list[Message]:
    """ToC's expansion step: clarifications (and answers) of one node's question from its own passages."""
    user = f"Passages:\n{block}\n\nQuestion: {question}\nReadings:"
    return [Message(role="system", content=CLARIFY_JSON_SYSTEM if as_json else CLARIFY_SYSTEM),
            Message(role="user", content=user)]


def read_clarification_lines(reply: str) -> Clarifications:
    """The ``question -> answer`` lines of a text reply (none is a reply with no clarifications)."""
    found, _ = parse_long_answer(reply)
    return Clarifications.model_construct(
        readings=[Clarification.model_construct(question=q, answer=a) for q, a in found])
