"""Answer a question with every distinct answer, each with its descriptor and citations.

Shared by COrg and its baselines: they differ in which contexts go into which call, not in
how a call is asked or read. A reply is one ``answer | descriptor | [n]`` line per answer
(``answer (descriptor) [n]`` is read too); lines are parsed leniently. Responses are rendered as
``answer (descriptor) [n]`` lines for people.
"""

from __future__ import annotations

import re

from tanglerag.llm.client import LLM
from tanglerag.methods.corg.prompts import multi_answer_messages
from tanglerag.text import cited_numbers, is_unknown, normalize_answer, number_passages, strip_citations
from tanglerag.types import AnswerPart, RetrievedPassage

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ABOUT = re.compile(r"^(?P<answer>.*?)\s*\((?P<about>[^()]*(?:\([^()]*\)[^()]*)*)\)$")
MAX_PARTS = 8


def parse_parts(raw: str, passages: list[RetrievedPassage], group: int | None) -> list[AnswerPart]:
    """Parts from a reply; ``[n]`` refers to ``passages`` (1-based), other numbers are dropped."""
    parts = []
    for line in raw.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or is_unknown(line):
            continue
        fields = [strip_citations(f) for f in line.split("|")]
        if len(fields) > 1:
            answer, descriptor = fields[0], fields[1]
        else:
            match = _ABOUT.match(fields[0])
            answer, descriptor = (match["answer"], match["about"]) if match and match["answer"] else (fields[0], "")
        if not answer or is_unknown(answer):
            continue
        ids = [passages[n - 1].passage.id for n in cited_numbers(line) if 1 <= n <= len(passages)]
        parts.append(AnswerPart(answer=answer, descriptor=descriptor, citations=ids, group=group))
        if len(parts) == MAX_PARTS:
            break
    return parts


def ask_group(llm: LLM, question: str, passages: list[RetrievedPassage], group: int | None, max_tokens: int,
              passage_words: int | None) -> list[AnswerPart]:
    """One call over ``passages`` numbered from 1 (no titles, as every COrg-family prompt shows them)."""
    block = number_passages(passages, passage_words, title_sep=None)
    reply = llm.complete(multi_answer_messages(question, block), llm.params(max_tokens=max_tokens))
    return parse_parts(reply.text, passages, group)


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
