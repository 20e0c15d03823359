import json

import pytest

from tanglerag.datasets.base import DatasetError
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.datasets.registry import detect_format, load_dataset

ASQA = {"ambiguous_question": "Who has the highest goals in world football?", "sample_id": 7,
        "answers": "model output, never gold",
        "qa_pairs": [
            {"question": "Who has the most goals in men's international football?", "short_answers": ["Daei", "Ali Daei"],
             "context": "No context provided", "wikipage": None},
            {"question": "Who has the most goals in women's international football?",
             "short_answers": ["Christine Sinclair"], "context": "Sinclair scored 187 international goals.",
             "wikipage": "Christine Sinclair"}],
        "annotations": [{"long_answer": "Ali Daei leads the men and Christine Sinclair the women.",
                         "knowledge": [{"content": "Ali Daei scored 109 goals for Iran.", "wikipage": "Ali Daei"},
                                       {"content": "Sinclair scored 187 international goals.",
                                        "wikipage": "Christine Sinclair"}]}]}
SITUATED = [{"question": "who won the world cup", "id": 1, "edited_question": "who won the world cup as of 2015",
             "date": "2015", "date_type": "sampled_year", "answer": ["Germany"], "any_answer": ["Germany", "France"]},
            {"question": "what is the legal amount of weed", "id": 2, "location": "maryland",
             "edited_question": "what is the legal amount of weed in maryland", "answer": ["10 grams or less"]}]


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_asqa_record_gives_readings_long_answers_and_passages(tmp_path):
    path = _write(tmp_path / "asqa.jsonl", [ASQA])
    assert detect_format(path) == "asqa"
    _, (example,) = load_dataset(str(path))
    readings = [Disambiguation.model_validate(d) for d in example.metadata["disambig"]]
    assert [r.answers for r in readings] == [["Daei", "Ali Daei"], ["Christine Sinclair"]]
    assert readings[0].sub_question.startswith("Who has the most goals in men's")
    assert example.metadata["long_answers"] == ["Ali Daei leads the men and Christine Sinclair the women."]
    # the shared context is one passage; "No context provided" is none; the model-output answers are ignored
    assert [(p.title, p.text) for p in example.passages] == [
        ("Christine Sinclair", "Sinclair scored 187 international goals."),
        ("Ali Daei", "Ali Daei scored 109 goals for Iran.")]
    assert "model output, never gold" not in example.answers and example.id == "7"
    assert example.tangles == ["ambiguous"]


def test_asqa_bad_records_name_file_and_line(tmp_path):
    bad = dict(ASQA, qa_pairs=[{"question": "q?", "short_answers": "Daei"}])
    with pytest.raises(DatasetError, match=r"asqa.jsonl:2: qa_pairs\[0\].short_answers must be a list"):
        load_dataset(str(_write(tmp_path / "asqa.jsonl", [ASQA, bad])))


def test_bundled_asqa_sample_loads():
    _, examples = load_dataset("asqa-sample")
    assert len(examples) == 20 and all(e.metadata["long_answers"] and e.passages for e in examples)


def test_situatedqa_groups_contexts_under_the_original_question(tmp_path):
    second_year = dict(SITUATED[0], date="2019", edited_question="who won the world cup as of 2019",
                       answer=["France", "France national team"])
    path = _write(tmp_path / "situated.jsonl", [SITUATED[0], SITUATED[1], second_year])
    assert detect_format(path) == "situatedqa"
    _, (cup, weed) = load_dataset(str(path))
    assert cup.question == "who won the world cup" and cup.answers == ["Germany", "France", "France national team"]
    assert cup.interpretations == ["who won the world cup as of 2015", "who won the world cup as of 2019"]
    readings = cup.metadata["disambig"]
    assert [(r["descriptor"], r["answer"], r["aliases"]) for r in readings] == [
        ("2015", "Germany", []), ("2019", "France", ["France national team"])]
    assert cup.metadata["context_type"] == "temporal" and weed.metadata["context_type"] == "geographic"
    assert cup.tangles == ["temporal", "ambiguous"] and weed.tangles[0] == "geographic"
    with pytest.raises(DatasetError, match="'answer' must be a non-empty list"):
        load_dataset(str(_write(tmp_path / "bad.jsonl", [dict(SITUATED[0], answer=[])])))
