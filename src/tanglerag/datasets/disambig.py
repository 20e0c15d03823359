"""Disambiguations of an ambiguous question: one (entity, descriptor, answer, sub-question) per reading.

AmbigDocs-style data names each reading by a disambiguated entity such as "Bobby Carpenter
(ice hockey)" or "Broken Bow, Nebraska". The descriptor is what tells it apart from the bare
name; the sub-question puts the full entity into the question, as the D-F1 reader needs.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

_PAREN = re.compile(r"^(.*?)\s*\((.+)\)\s*$")


class Disambiguation(BaseModel):
    entity: str
    descriptor: str
    answer: str
    sub_question: str
    aliases: list[str] = Field(default_factory=list, description="other accepted forms of the answer (ASQA)")

    @property
    def answers(self) -> list[str]:
        return [self.answer, *(a for a in self.aliases if a != self.answer)]


def split_entity(entity: str) -> tuple[str, str]:
    """(surface name, descriptor): "X (film)" -> ("X", "film"); "Y, Nebraska" -> ("Y", "Nebraska")."""
    entity = entity.strip()
    match = _PAREN.match(entity)
    if match:
        return match.group(1).strip(), match.group(2).strip()
    if "," in entity:
        name, _, rest = entity.partition(",")
        return name.strip(), rest.strip()
    return entity, ""


def sub_question(question: str, entity: str) -> str:
    name, descriptor = split_entity(entity)
    if not descriptor:
        return question
    if name and name.lower() in question.lower():
        start = question.lower().index(name.lower())
        return question[:start] + entity + question[start + len(name):]
    return f"{question.rstrip().rstrip('?')} ({entity})?"


def disambiguations(question: str, entities: list[str], answers: list[str]) -> list[Disambiguation]:
    """Pair entities with answers by position; lists of different lengths give no disambiguations."""
    if len(entities) != len(answers):
        return []
    return [Disambiguation(entity=e, descriptor=split_entity(e)[1], answer=a, sub_question=sub_question(question, e))
            for e, a in zip(entities, answers, strict=True)]
