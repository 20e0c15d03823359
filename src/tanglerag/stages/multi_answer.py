"""The multi-answer shape: every distinct answer with what it is about and its citations.

COrg and its baselines ask for it (``methods/corg/multi_answer.ask_group``), MADAM-RAG's aggregator writes it. A
text reply is one ``answer | descriptor | [n]`` line per answer
(``answer (descriptor) [n]`` is read too), parsed leniently; a JSON reply (``llm.structured``) is a list of
{answer, about, contexts}, the context numbers bounded by the schema to those shown. Responses are rendered as
``answer (descriptor) [n]`` lines for people.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from tanglerag.text import cited_numbers, is_unknown, normalize_answer, strip_citations
from tanglerag.types import AnswerPart, RetrievedPassage

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ABOUT = re.compile(r"^(?P<answer>.*?)\s*\((?P<about>[^()]*(?:\([^()]*\)[^()]*)*)\)$")
MAX_PARTS = 8


class Part(BaseModel):
    answer: str = Field(max_length=160)
    about: str = Field(max_length=160)
    contexts: list[int]


class Parts(BaseModel):
    """Every different answer; an empty list when no context is about what the question asks."""

    answers: list[Part] = Field(max_length=MAX_PARTS)


@cache
def bounded_part(shown: int) -> type[Part]:
    """``Part`` whose context numbers lie in 1..shown, so a constrained reply cites only contexts it saw."""
    return create_model("BoundedPart", __base__=Part,
                        contexts=(list[Annotated[int, Field(ge=1, le=shown)]], Field(max_length=shown)))


def bounded_answers(shown: int) -> tuple[Any, Any]:
    """The ``answers`` field of a reply whose parts cite only contexts 1..shown (a type built at run time). At
    least one entry: with an empty list allowed, the grammar's shortest path, the 1.5B model wrote ``[]`` for most
    questions (COrg's D-F1 fell from 35 to 12); an abstention is one entry whose answer is unknown."""
    return list[bounded_part(shown)], Field(min_length=1, max_length=MAX_PARTS)  # type: ignore[misc]


def parts_so_far(decoded: dict[str, Any]) -> str:
    """A JSON parts reply as far as it is decoded, a line per answer ("Mozart — the quintet in C"): what a watcher
    reads while the model writes it (the method's answer, merged and cited, comes after). Nothing closes after a
    value, so each view extends the one before."""
    lines = []
    for part in decoded.get("answers") or []:
        if isinstance(part, dict) and isinstance(part.get("answer"), str):
            about = part.get("about")
            lines.append(part["answer"] + (f" — {about}" if isinstance(about, str) and about else ""))
    return "\n".join(lines)


@cache
def parts_reply(shown: int) -> type[Parts]:
    return create_model("Parts", __base__=Parts, answers=bounded_answers(shown))


def labelled_line(text: str, label: str) -> tuple[str, str]:
    """(the text without its ``label:`` line, that line's value): a parts reply that ends with a summary or reason."""
    value = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.strip().lower().startswith(f"{label}:")), "")
    rest = "\n".join(line for line in text.splitlines() if not line.strip().lower().startswith(f"{label}:"))
    return rest, value


def read_part_lines(raw: str, shown: int) -> Parts:
    """Parts from a text reply, leniently; context numbers outside 1..shown are dropped."""
    answers = []
    for line in raw.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or is_unknown(line):
            continue
        fields = [strip_citations(f) for f in line.split("|")]
        if len(fields) > 1:
            answer, about = fields[0], fields[1]
        else:
            match = _ABOUT.match(fields[0])
            answer, about = (match["answer"], match["about"]) if match and match["answer"] else (fields[0], "")
        if not answer or is_unknown(answer):
            continue
        answers.append(Part.model_construct(answer=answer, about=about,
                                            contexts=[n for n in cited_numbers(line) if 1 <= n <= shown]))
        if len(answers) == MAX_PARTS:
            break
    return Parts.model_construct(answers=answers)


def parts_of(reply: Parts, passages: list[RetrievedPassage], group: int | None) -> list[AnswerPart]:
    """The reply's answers as parts citing passage ids (``contexts`` count ``passages`` from 1)."""
    parts = []
    for part in reply.answers:
        if not part.answer.strip() or is_unknown(part.answer):
            continue
        ids = [passages[n - 1].passage.id for n in part.contexts if 1 <= n <= len(passages)]
        parts.append(AnswerPart(answer=part.answer.strip(), descriptor=part.about.strip(),
                                citations=list(dict.fromkeys(ids)), group=group))
    return parts


def parse_parts(raw: str, passages: list[RetrievedPassage], group: int | None) -> list[AnswerPart]:
    """Parts from a text reply; ``[n]`` refers to ``passages`` (1-based), other numbers are dropped."""
    return parts_of(read_part_lines(raw, len(passages)), passages, group)


def merge_parts(parts: list[AnswerPart]) -> list[AnswerPart]:
    """One part per (answer, descriptor); citations of repeats are pooled."""
    merged: dict[tuple[str, str], AnswerPart] = {}
    for part in parts:
        key = (normalize_answer(part.answer), normalize_answer(part.descriptor))
        if key in merged:
            kept = merged[key]
            kept.citations += [c for c in part.citations if c not in kept.citations]
        else:
            merged[key] = part.model_copy(deep=True)
    return list(merged.values())


def render(parts: list[AnswerPart], passages: list[RetrievedPassage]) -> tuple[str, list[str]]:
    """The response text, one line per answer, citing positions in ``passages``; and all cited ids."""
    position = {p.passage.id: i for i, p in enumerate(passages, 1)}
    lines, cited = [], []
    for part in parts:
        marks = "".join(f"[{position[c]}]" for c in part.citations if c in position)
        about = f" ({part.descriptor})" if part.descriptor else ""
        lines.append(f"{part.answer}{about} {marks}".strip())
        cited += [c for c in part.citations if c not in cited]
    return "\n".join(lines), cited
