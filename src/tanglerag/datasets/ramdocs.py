"""RAMDocs: per-question documents typed correct / misinfo / noise, gold and wrong answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, require, string_field, string_list
from tanglerag.datasets.disambig import disambiguations
from tanglerag.errors import DatasetError
from tanglerag.types import Passage

FORMAT = "ramdocs"


def looks_like(record: dict[str, Any]) -> bool:
    return {"question", "documents", "gold_answers"} <= record.keys()


def load(path: Path) -> list[QAExample]:
    examples: list[QAExample] = []
    for line_no, record in iter_json_records(path):
        documents = require(record, "documents", path, line_no)
        if not isinstance(documents, list):
            raise DatasetError(f"{path}:{line_no}: 'documents' must be a list")
        qid = f"ramdocs-{len(examples):04d}"
        passages = []
        for j, doc in enumerate(documents):
            if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not doc["text"].strip():
                raise DatasetError(f"{path}:{line_no}: document {j} has no text")
            passages.append(Passage(id=f"{qid}-d{j}", text=doc["text"],
                                    metadata={"type": doc.get("type", ""), "answer": doc.get("answer", "")}))
        question = string_field(record, "question", path, line_no)
        answers = string_list(require(record, "gold_answers", path, line_no), "gold_answers", path, line_no)
        entities = record.get("disambig_entity", [])
        examples.append(QAExample(
            id=qid, question=question, answers=answers, passages=passages, tangles=_tangles(answers, passages),
            metadata={"wrong_answers": record.get("wrong_answers", []), "disambig_entity": entities,
                      "disambig": [d.model_dump() for d in disambiguations(question, entities, answers)]},
        ))
    return examples


def _tangles(answers: list[str], passages: list[Passage]) -> list[str]:
    """Several gold answers are same-name entities; misinfo and noise documents are RAMDocs' own labels."""
    types = {p.metadata["type"] for p in passages}
    return ((["ambiguous"] if len(answers) > 1 else []) + (["misinformation"] if "misinfo" in types else [])
            + (["noise"] if "noise" in types else []))
