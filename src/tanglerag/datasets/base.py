"""The evaluation record every loader produces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tanglerag.errors import DatasetError
from tanglerag.jsonio import loads as json_loads
from tanglerag.types import Passage

TANGLES_DOC = ("what makes the question tangled, as its dataset tells: 'ambiguous' (several valid answers), "
               "'same-name' (passages about different entities that share a name), 'misinformation' or 'conflict' "
               "(passages that state a wrong answer), 'noise' (passages with no answer), 'temporal' or "
               "'geographic' (the answer depends on when or where); empty when none is known")
"""Carried into every prediction so a run's results can be sliced by the kind of tangle."""


class QAExample(BaseModel):
    """A question with gold answers and, for closed-corpus datasets, its own passages."""

    id: str
    question: str
    answers: list[str]
    passages: list[Passage] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    interpretations: list[str] = Field(
        default_factory=list, description="gold disambiguated questions (ASQA), for oracle retrieval only")
    tangles: list[str] = Field(default_factory=list, description=TANGLES_DOC)


def iter_json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, record) from a JSONL file, or from a JSON array file."""
    if not path.exists():
        raise DatasetError(f"dataset file not found: {path}")
    if path.is_dir():
        raise DatasetError(f"{path} is a folder; give a dataset file (JSONL or a JSON array)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_no = raw[:exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}:{line_no}: not UTF-8 text (byte {raw[exc.start]:#04x}); save the file as UTF-8") from exc
    if text.lstrip().startswith("["):
        try:
            records = json_loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: invalid JSON: {exc}") from exc
        for i, record in enumerate(records, 1):
            yield i, _require_object(record, path, i)
        return
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json_loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{line_no}: invalid JSON: {exc.msg}") from exc
        yield line_no, _require_object(record, path, line_no)


def _require_object(record: Any, path: Path, line_no: int) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise DatasetError(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
    return record


def require(record: dict[str, Any], field: str, path: Path, line_no: int) -> Any:
    if field not in record:
        raise DatasetError(f"{path}:{line_no}: missing field {field!r}")
    return record[field]


def string_field(record: dict[str, Any], field: str, path: Path, line_no: int) -> str:
    """A required, non-empty string field (numbers and nulls are not silently turned into text)."""
    value = require(record, field, path, line_no)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{path}:{line_no}: {field!r} must be a non-empty string, got {_shown(value)}")
    return value.strip()


def string_list(value: Any, field: str, path: Path, line_no: int, *, allow_single: bool = False) -> list[str]:
    """A non-empty list of non-empty strings (or one string, where the format allows it)."""
    if allow_single and isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise DatasetError(f"{path}:{line_no}: {field!r} must be a non-empty list of non-empty strings, "
                           f"got {_shown(value)}")
    return [v.strip() for v in value]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
