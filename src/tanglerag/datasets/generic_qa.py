"""Generic open-domain QA with retrieved passages: ``{question, answers, passages}`` JSONL.

Accepts the common variants users bring from NQ / TriviaQA / SQuAD pipelines:
``answers`` or ``answer`` (string or list), ``passages`` or ``ctxs`` (DPR style), each
passage a string or an object with ``text`` and optional ``id`` / ``title``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import DatasetError, QAExample, iter_json_records, require
from tanglerag.types import Passage

FORMAT = "qa"


def looks_like(record: dict[str, Any]) -> bool:
    return "question" in record and ("answers" in record or "answer" in record)


def load(path: Path) -> list[QAExample]:
    examples = []
    for line_no, record in iter_json_records(path):
        question = require(record, "question", path, line_no)
        answers = record.get("answers", record.get("answer"))
        if answers is None:
            raise DatasetError(f"{path}:{line_no}: missing field 'answers'")
        answers = [answers] if isinstance(answers, str) else [str(a) for a in answers]
        qid = str(record.get("id", f"q{line_no}"))
        raw_passages = record.get("passages", record.get("ctxs", []))
        passages = [_passage(p, f"{qid}-p{j}", path, line_no) for j, p in enumerate(raw_passages)]
        examples.append(QAExample(id=qid, question=question, answers=answers, passages=passages))
    return examples


def _passage(raw: Any, default_id: str, path: Path, line_no: int) -> Passage:
    if isinstance(raw, str):
        return Passage(id=default_id, text=raw)
    if not isinstance(raw, dict) or not str(raw.get("text", "")).strip():
        raise DatasetError(f"{path}:{line_no}: each passage needs a non-empty 'text'")
    metadata = {k: v for k, v in raw.items() if k not in {"id", "title", "text"}}
    return Passage(id=str(raw.get("id", default_id)), title=str(raw.get("title") or ""), text=raw["text"],
                   metadata=metadata)
