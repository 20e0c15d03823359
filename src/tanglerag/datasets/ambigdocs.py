"""AmbigDocs (Lee et al., 2024): a question about an ambiguous name, documents about its readings.

A record holds ``question``, ``ambiguous_entity`` and ``documents``, each with the
disambiguated entity as ``title`` and that reading's ``answer``. The gold answers are the
documents' answers; each distinct (title, answer) is one disambiguation for Ent/EAR/D-F1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, require, string_field
from tanglerag.datasets.disambig import disambiguations
from tanglerag.errors import DatasetError
from tanglerag.types import Passage

FORMAT = "ambigdocs"


def looks_like(record: dict[str, Any]) -> bool:
    return {"question", "ambiguous_entity", "documents"} <= record.keys()


def _answer(value: Any) -> str:
    """Answers come as a string or a list of aliases; the first alias names the answer."""
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value or "")


def load(path: Path) -> list[QAExample]:
    examples: list[QAExample] = []
    for line_no, record in iter_json_records(path):
        documents = require(record, "documents", path, line_no)
        if not isinstance(documents, list) or not documents:
            raise DatasetError(f"{path}:{line_no}: 'documents' must be a non-empty list")
        qid = str(record.get("qid", f"ambigdocs-{len(examples):04d}"))
        question = string_field(record, "question", path, line_no)
        passages: list[Passage] = []
        readings: dict[tuple[str, str], None] = {}
        for j, doc in enumerate(documents):
            if not isinstance(doc, dict) or not str(doc.get("text", "")).strip():
                raise DatasetError(f"{path}:{line_no}: document {j} has no text")
            title, answer = str(doc.get("title", "")), _answer(doc.get("answer"))
            passages.append(Passage(id=str(doc.get("pid", f"{qid}-d{j}")), title=title, text=doc["text"],
                                    metadata={"answer": answer}))
            if title and answer:
                readings.setdefault((title, answer), None)
        entities = [t for t, _ in readings]
        answers = [a for _, a in readings]
        examples.append(QAExample(
            id=qid, question=question, answers=list(dict.fromkeys(answers)), passages=passages,
            tangles=["same-name", *(["ambiguous"] if len(set(answers)) > 1 else [])],
            metadata={"ambiguous_entity": record["ambiguous_entity"], "disambig_entity": entities,
                      "disambig": [d.model_dump() for d in disambiguations(question, entities, answers)]},
        ))
    return examples
