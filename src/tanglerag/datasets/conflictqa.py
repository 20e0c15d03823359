"""conflictQA (Xie et al., 2024): a question, the model's own memory passage and a counter-memory passage.

Each record pairs ``parametric_memory`` (evidence for the answer the model gave from memory,
``memory_answer``) with ``counter_memory`` (evidence built to contradict it, for ``counter_answer``). Both
become passages, typed ``memory`` and ``counter`` in their metadata, so a CDIT judge can be scored on
telling them apart. StrategyQA-half records have ``ground_truth`` True/False: their gold answers are
yes/true or no/false, whichever word a reply uses; PopQA-half records keep their answer strings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tanglerag.datasets.base import QAExample, iter_json_records, require, string_field, string_list
from tanglerag.errors import DatasetError
from tanglerag.types import Passage

FORMAT = "conflictqa"
_BOOLEAN = {"true": ["yes", "true"], "false": ["no", "false"]}


def looks_like(record: dict[str, Any]) -> bool:
    return {"question", "ground_truth", "parametric_memory", "counter_memory"} <= record.keys()


def load(path: Path) -> list[QAExample]:
    examples: list[QAExample] = []
    for line_no, record in iter_json_records(path):
        question = string_field(record, "question", path, line_no)
        truth = string_list(require(record, "ground_truth", path, line_no), "ground_truth", path, line_no)
        if not truth:
            raise DatasetError(f"{path}:{line_no}: 'ground_truth' is empty")
        answers = [a for t in truth for a in _BOOLEAN.get(t.strip().lower(), [t])]
        qid = f"conflictqa-{len(examples):04d}"
        passages = []
        for kind, text_key, answer_key in (("memory", "parametric_memory", "memory_answer"),
                                           ("counter", "counter_memory", "counter_answer")):
            text = string_field(record, text_key, path, line_no)
            passages.append(Passage(id=f"{qid}-{kind}", text=text.strip(),
                                    metadata={"type": kind, "answer": str(record.get(answer_key, ""))}))
        examples.append(QAExample(id=qid, question=question, answers=list(dict.fromkeys(answers)), passages=passages,
                                  tangles=["conflict"],
                                  metadata={"popularity": record.get("popularity")}))
    return examples
