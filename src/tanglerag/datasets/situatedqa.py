"""SituatedQA (Zhang & Choi, 2021): questions whose answer depends on a time or a place.

Each record is one (question, context) pair: ``edited_question`` adds the date or location to the
original ``question``, ``answer`` holds the answers for that context and ``any_answer`` those valid in
some context. The question asked is the edited one; SituatedQA F1 is token F1 against ``answer``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import DatasetError, QAExample, iter_json_records, require

FORMAT = "situatedqa"


def looks_like(record: dict[str, Any]) -> bool:
    return {"edited_question", "answer"} <= record.keys() and ("date" in record or "location" in record)


def load(path: Path) -> list[QAExample]:
    examples = []
    for line_no, record in iter_json_records(path):
        question = require(record, "edited_question", path, line_no)
        answers = require(record, "answer", path, line_no)
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f"{path}:{line_no}: 'edited_question' must be a non-empty string")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise DatasetError(f"{path}:{line_no}: 'answer' must be a non-empty list of strings")
        kind, context = ("temporal", record["date"]) if "date" in record else ("geographic", record["location"])
        examples.append(QAExample(
            id=f"{record.get('id', len(examples))}-{context}", question=question.strip(),
            answers=list(dict.fromkeys(a.strip() for a in answers if a.strip())),
            metadata={"original_question": record.get("question", ""), "context_type": kind, "context": str(context),
                      "any_answer": record.get("any_answer", [])},
        ))
    return examples
