import json

import pytest

from tanglerag.datasets.base import DatasetError
from tanglerag.datasets.registry import load_dataset

RECORD = {"question": "Can the members of The Police perform lawful arrests?", "popularity": 1200,
          "ground_truth": ["False"], "memory_answer": "They could not.",
          "parametric_memory": "The Police is a rock band; its members are musicians, not police officers.",
          "counter_answer": "They can.", "counter_memory": "The band members were sworn in as constables in 1982.",
          "parametric_memory_aligned_evidence": "...", "counter_memory_aligned_evidence": "..."}


def test_conflictqa_record_gives_both_passages_typed_and_yes_no_answers(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "ground_truth": ["Paris"]}) + "\n")
    name, (boolean, entity) = load_dataset(str(path))
    assert boolean.answers == ["no", "false"] and entity.answers == ["Paris"]
    assert [(p.id, p.metadata["type"]) for p in boolean.passages] == [("conflictqa-0000-memory", "memory"),
                                                                     ("conflictqa-0000-counter", "counter")]
    assert boolean.passages[1].metadata["answer"] == "They can."
    assert boolean.tangles == ["conflict"]


def test_conflictqa_bad_records_name_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "counter_memory": 3}) + "\n")
    with pytest.raises(DatasetError, match=r"c.jsonl:2: 'counter_memory' must be a non-empty string"):
        load_dataset(str(path))
