"""ASQA (Stelmakh et al., 2022): ambiguous questions with disambiguated short answers and long answers.

A record holds ``ambiguous_question``, ``qa_pairs`` (one disambiguated question each, with its
``short_answers``) and ``annotations`` (human ``long_answer`` texts and the ``knowledge`` passages
they used). The gold long answers feed ROUGE-L, the qa pairs D-F1 and MRecall. The record's own
``answers`` field, where present, is model output and is never read. Passages are the annotation
knowledge and the qa-pair contexts: pooled over a file they form a small Wikipedia-like corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, require
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.errors import DatasetError
from tanglerag.types import Passage

FORMAT = "asqa"
_NO_CONTEXT = "No context provided"


def looks_like(record: dict[str, Any]) -> bool:
    return {"ambiguous_question", "qa_pairs"} <= record.keys()


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{where} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def load(path: Path) -> list[QAExample]:
    examples: list[QAExample] = []
    for line_no, record in iter_json_records(path):
        where = f"{path}:{line_no}"
        qid = str(record.get("sample_id", f"asqa-{len(examples):04d}"))
        question = require(record, "ambiguous_question", path, line_no)
        pairs = require(record, "qa_pairs", path, line_no)
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f"{where}: 'ambiguous_question' must be a non-empty string")
        if not isinstance(pairs, list):
            raise DatasetError(f"{where}: 'qa_pairs' must be a list")
        readings: list[Disambiguation] = []
        texts: dict[str, str] = {}
        for j, pair in enumerate(pairs):
            if not isinstance(pair, dict) or not isinstance(pair.get("question"), str):
                raise DatasetError(f"{where}: qa_pairs[{j}] needs a 'question'")
            short = _strings(pair.get("short_answers", []), f"{where}: qa_pairs[{j}].short_answers")
            if short:
                readings.append(Disambiguation(entity="", descriptor="", answer=short[0], aliases=short[1:],
                                               sub_question=pair["question"]))
            context = pair.get("context")
            if isinstance(context, str) and context.strip() and context.strip() != _NO_CONTEXT:
                texts.setdefault(context.strip(), pair.get("wikipage") or "")
        long_answers = []
        for annotation in record.get("annotations") or []:
            if not isinstance(annotation, dict):
                raise DatasetError(f"{where}: each annotation must be an object")
            if isinstance(annotation.get("long_answer"), str) and annotation["long_answer"].strip():
                long_answers.append(annotation["long_answer"].strip())
            for item in annotation.get("knowledge") or []:
                if isinstance(item, dict) and isinstance(item.get("content"), str) and item["content"].strip():
                    texts.setdefault(item["content"].strip(), item.get("wikipage") or "")
        passages = [Passage(id=f"{qid}-k{j}", title=str(title or ""), text=text)
                    for j, (text, title) in enumerate(texts.items())]
        examples.append(QAExample(
            id=qid, question=question.strip(), answers=list(dict.fromkeys(a for r in readings for a in r.answers)),
            passages=passages, interpretations=[r.sub_question for r in readings if r.sub_question],
            tangles=["ambiguous"] if len(readings) > 1 else [],
            metadata={"disambig": [r.model_dump() for r in readings], "long_answers": long_answers},
        ))
    return examples
