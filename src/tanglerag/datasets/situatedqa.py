"""SituatedQA (Zhang & Choi, 2021): questions whose answer depends on a time or a place.

Each record is one (question, context) pair: ``edited_question`` adds the date or location to the
original ``question`` and ``answer`` holds the answers in that context. As in Diva's evaluation
(paper 001), the records of one original question become one example: the system is asked the
original, ambiguous question, and each context is one reading (its edited question, its answers, the
date or place as descriptor) that the response should cover; ``situated_f1`` scores that coverage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, require
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.errors import DatasetError

FORMAT = "situatedqa"


def looks_like(record: dict[str, Any]) -> bool:
    return {"edited_question", "answer"} <= record.keys() and ("date" in record or "location" in record)


def load(path: Path) -> list[QAExample]:
    groups: dict[str, dict[str, Any]] = {}
    for line_no, record in iter_json_records(path):
        edited = require(record, "edited_question", path, line_no)
        answers = require(record, "answer", path, line_no)
        if not isinstance(edited, str) or not edited.strip():
            raise DatasetError(f"{path}:{line_no}: 'edited_question' must be a non-empty string")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise DatasetError(f"{path}:{line_no}: 'answer' must be a non-empty list of strings")
        original = record.get("question")
        if not isinstance(original, str) or not original.strip():
            raise DatasetError(f"{path}:{line_no}: 'question' (the original question) must be a non-empty string")
        kind, context = ("temporal", record["date"]) if "date" in record else ("geographic", record["location"])
        answers = list(dict.fromkeys(a.strip() for a in answers if a.strip()))
        if not answers:
            raise DatasetError(f"{path}:{line_no}: 'answer' holds only empty strings")
        group = groups.setdefault(str(record.get("id", original.strip())),
                                  {"question": original.strip(), "kind": kind, "readings": []})
        group["readings"].append(Disambiguation(entity="", descriptor=str(context), answer=answers[0],
                                                aliases=answers[1:], sub_question=edited.strip()))
    examples = []
    for key, group in groups.items():
        readings: list[Disambiguation] = group["readings"]
        examples.append(QAExample(
            id=f"situatedqa-{key}", question=group["question"],
            answers=list(dict.fromkeys(a for r in readings for a in r.answers)),
            interpretations=[r.sub_question for r in readings],
            tangles=[group["kind"], *(["ambiguous"] if len(readings) > 1 else [])],
            metadata={"context_type": group["kind"], "disambig": [r.model_dump() for r in readings]}))
    return examples
