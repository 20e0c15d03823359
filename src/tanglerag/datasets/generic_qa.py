"""Generic open-domain QA with retrieved passages: ``{question, answers, passages}`` JSONL.

Accepts the common variants users bring from NQ / TriviaQA / SQuAD pipelines:
``answers`` or ``answer`` (string or list), ``passages`` or ``ctxs`` (DPR style), each
passage a string or an object with ``text`` and optional ``id`` / ``title``; an optional ``tangles`` names
what makes the question tangled (see ``QAExample.tangles``). Any other key of a record (``wrong_answers``, a
``source``) is kept in the example's metadata, where metrics such as ``misinfo_leak`` read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, string_field, string_list
from tanglerag.errors import DatasetError
from tanglerag.types import Passage, record_id

FORMAT = "qa"
_READ = {"id", "question", "answers", "answer", "passages", "ctxs", "tangles"}


def looks_like(record: dict[str, Any]) -> bool:
    return "question" in record and ("answers" in record or "answer" in record)


def load(path: Path) -> list[QAExample]:
    examples = []
    for line_no, record in iter_json_records(path):
        question = string_field(record, "question", path, line_no)
        field = "answers" if "answers" in record else "answer"
        if field not in record:
            raise DatasetError(f"{path}:{line_no}: missing field 'answers'")
        answers = string_list(record[field], field, path, line_no, allow_single=True)
        qid = _identifier(record.get("id", f"q{line_no}"), path, line_no)
        raw_passages = record.get("passages", record.get("ctxs", []))
        if not isinstance(raw_passages, list):
            raise DatasetError(f"{path}:{line_no}: 'passages' must be a list of strings or objects")
        passages = [_passage(p, f"{qid}-p{j}", path, line_no) for j, p in enumerate(raw_passages)]
        tangles = (string_list(record["tangles"], "tangles", path, line_no, allow_single=True)
                   if "tangles" in record else [])
        metadata = {k: v for k, v in record.items() if k not in _READ}
        examples.append(QAExample(id=qid, question=question, answers=answers, passages=passages, tangles=tangles,
                                  metadata=metadata))
    return examples


def _identifier(value: Any, path: Path, line_no: int) -> str:
    try:
        return record_id(value)
    except ValueError as exc:
        raise DatasetError(f"{path}:{line_no}: an {exc}") from exc


def _passage(raw: Any, default_id: str, path: Path, line_no: int) -> Passage:
    if isinstance(raw, str) and raw.strip():
        return Passage(id=default_id, text=raw)
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
        raise DatasetError(f"{path}:{line_no}: each passage needs a non-empty 'text' string")
    if not isinstance(raw.get("title") or "", str):
        raise DatasetError(f"{path}:{line_no}: a passage 'title' must be a string")
    metadata = {k: v for k, v in raw.items() if k not in {"id", "title", "text"}}
    return Passage(id=_identifier(raw.get("id", default_id), path, line_no), title=raw.get("title") or "",
                   text=raw["text"], metadata=metadata)
