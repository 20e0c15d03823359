import json

import pytest

from tanglerag.datasets.base import DatasetError
from tanglerag.datasets.registry import load_dataset

RECORD = {"qid": "a1", "question": "What sport is Bobby Carpenter associated with?",
          "ambiguous_entity": "Bobby Carpenter",
          "documents": [{"title": "Bobby Carpenter (American football)", "text": "He was a linebacker.",
                         "pid": "p1", "answer": ["American football", "football"]},
                        {"title": "Bobby Carpenter (ice hockey)", "text": "He played centre.", "pid": "p2",
                         "answer": "ice hockey"},
                        {"title": "Bobby Carpenter (ice hockey)", "text": "An NHL forward.", "pid": "p3",
                         "answer": "ice hockey"}]}


def test_ambigdocs_format_is_detected_and_disambiguated(tmp_path):
    path = tmp_path / "ambigdocs.jsonl"
    path.write_text(json.dumps(RECORD) + "\n")
    _, [example] = load_dataset(str(path))
    assert example.id == "a1" and example.answers == ["American football", "ice hockey"]
    assert example.tangles == ["same-name", "ambiguous"]
    assert [p.id for p in example.passages] == ["p1", "p2", "p3"]
    assert example.passages[0].title == "Bobby Carpenter (American football)"
    readings = example.metadata["disambig"]
    assert [r["descriptor"] for r in readings] == ["American football", "ice hockey"]
    assert readings[1]["sub_question"] == "What sport is Bobby Carpenter (ice hockey) associated with?"


def test_ambigdocs_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**RECORD, "documents": [{"title": "x", "text": " "}]}) + "\n")
    with pytest.raises(DatasetError, match="bad.jsonl:1: document 0 has no text"):
        load_dataset(str(path))
