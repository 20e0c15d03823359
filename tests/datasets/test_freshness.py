"""The freshness set (issue 50, item 7): benchmarks/freshness_set.py on a hand-made SituatedQA-format file, the
registered `freshness` dataset, the qa format keeping passage metadata, and `as_of_correct`."""

import importlib.util
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.registry import load_dataset
from tanglerag.metrics.registry import compute
from tanglerag.types import Answer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "freshness_set.py"
_spec = importlib.util.spec_from_file_location("freshness_set", SCRIPT)
assert _spec is not None and _spec.loader is not None
fs = sys.modules["freshness_set"] = importlib.util.module_from_spec(_spec)  # dataclasses look their module up
_spec.loader.exec_module(fs)


def _rec(qid, question, date, date_type, answer):
    return {"question": question, "id": qid, "edited_question": f"{question} as of {date}", "date": date,
            "date_type": date_type, "answer": answer, "any_answer": []}


ENGLAND = "when did england last get to the semi final of a world cup"
TALENT = "who won the last series of ireland's got talent"
CAPITAL = "what is the capital of the country"
RECORDS = [
    _rec(-7, ENGLAND, "2021", "sampled_year", ["2018", "2018"]),
    _rec(-7, ENGLAND, "2015", "sampled_year", ["1990"]),
    _rec(-7, ENGLAND, "2018", "start", ["2018"]),
    _rec(-7, ENGLAND, "1990", "start", ["1990"]),
    _rec(-7, ENGLAND, "June 10, 2018", "sampled_date", ["2018"]),  # a day in the year-only 2018: undecidable
    # a year-only start beside a full-date start of the same answer: the full date is kept
    _rec(8, TALENT, "May 28, 2019", "sampled_date", ["BSD"]),
    _rec(8, TALENT, "February 14, 2019", "sampled_date", ["RDC", "R.D.C."]),
    _rec(8, TALENT, "April 07, 2019", "start", ["BSD"]),
    _rec(8, TALENT, "March 24, 2018", "start", ["RDC", "R.D.C."]),
    _rec(8, TALENT, "2019", "start", ["BSD"]),
    # one answer at two dates: nothing to tell apart
    _rec(9, CAPITAL, "2010", "sampled_year", ["Bern"]),
    _rec(9, CAPITAL, "1999", "start", ["Bern"]),
    {"question": "how many legs does a spider have", "id": 10, "edited_question": "how many legs does a spider have",
     "date": "2021", "date_type": "orig", "answer": ["8"], "any_answer": ["8"]},
]


@pytest.fixture
def situated(tmp_path):
    path = tmp_path / "temp.dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


def test_records_are_grouped_by_id_and_a_split_id_is_refused():
    groups = list(fs.grouped(json.dumps(r) for r in RECORDS))
    assert [len(g) for g in groups] == [5, 5, 2, 1]
    with pytest.raises(ValueError, match="two separate runs"):
        list(fs.grouped(json.dumps(r) for r in [RECORDS[0], RECORDS[5], RECORDS[1]]))


def test_a_timeline_keeps_dated_answers_and_the_forms_the_rules_decide():
    england = fs.timeline(RECORDS[:5])
    assert [(e.date, e.answer) for e in england.entries] == [("1990", "1990"), ("2018", "2018")]
    assert [(f.question, f.as_of, england.entries[f.valid].answer) for f in england.forms] == [
        (ENGLAND, None, "2018"), (f"{ENGLAND} as of 2021", "2021", "2018"), (f"{ENGLAND} as of 2015", "2015", "1990"),
        (f"{ENGLAND} as of 2018", "2018", "2018"), (f"{ENGLAND} as of 1990", "1990", "1990")]
    assert england.left_out == Counter({"as-of: rule undecidable": 1})
    talent = fs.timeline(RECORDS[5:10])
    assert [(e.date, e.answer, e.aliases) for e in talent.entries] == [
        ("2018-03-24", "RDC", ("R.D.C.",)), ("2019-04-07", "BSD", ())]
    # an as-of year counts the whole year: as of 2019, BSD (April) had followed RDC, as SituatedQA says
    assert {(f.as_of, talent.entries[f.valid].answer) for f in talent.forms} == {
        (None, "BSD"), ("2019-05-28", "BSD"), ("2019-02-14", "RDC"), ("2019-04-07", "BSD"), ("2018-03-24", "RDC"),
        ("2019", "BSD")}
    assert talent.left_out == Counter()
    assert fs.timeline(RECORDS[10:12]) is None and fs.timeline(RECORDS[12:]) is None


def test_the_as_of_rule_orders_dates_only_as_far_as_their_precision_tells():
    assert fs.on_or_before("2018", "2018") and fs.on_or_before("2018-03-24", "2018")
    assert fs.on_or_before("2018", "2019-01-05") and not fs.on_or_before("2019-02-01", "2019-01-05")
    assert fs.on_or_before("2019", "2019-01-05") is None
    line = (fs.Entry("2018-03-24", "RDC", ()), fs.Entry("2019", "BSD", ()))
    assert fs.resolve(line, "2018-12-31") == 0 and fs.resolve(line, "2020") == 1
    assert fs.resolve(line, "2019-06-01") is None and fs.resolve(line, "2017") is None


def test_each_dated_answer_gets_a_passage_with_its_date_and_source_and_a_neighbour_gives_a_distractor():
    england, talent = fs.timeline(RECORDS[:5]), fs.timeline(RECORDS[5:10])
    made = fs.passages(talent, england, random.Random("0-8"))
    assert made == fs.passages(talent, england, random.Random("0-8"))  # seeded
    assert sorted(i for i, _ in made if i is not None) == [0, 1] and len(made) == 3
    texts = {i: p for i, p in made}
    assert "RDC" in texts[0]["text"] and "March 24, 2018" in texts[0]["text"] and texts[0]["date"] == "2018-03-24"
    assert "BSD" in texts[1]["text"] and "April 7, 2019" in texts[1]["text"]
    assert ENGLAND.capitalize() in texts[None]["text"]
    # one source a passage, each with its own wording
    assert len({p["source"] for _, p in made}) == 3 and all(p["title"] == p["source"] for _, p in made)
    assert len({dict(fs.SOURCES)[p["source"]] for _, p in made}) == 3


def test_rows_keep_the_gold_of_both_rules_and_type_their_passages(situated):
    counts = Counter()
    rows = {r["id"]: r for _, rs in fs.question_rows(situated, 0, counts) for r in rs}
    assert counts["ids with 2+ dated variants"] == 3 and counts["ids with 2+ distinct dated answers"] == 2
    old = rows["freshness--7-asof-2015"]
    assert old["answers"] == ["1990"] and old["wrong_answers"] == ["2018"] and old["newest_answer"] == "2018"
    assert old["rule"] == "as-of" and old["as_of"] == "2015" and old["timeline"] == [
        {"date": "1990", "answer": "1990"}, {"date": "2018", "answer": "2018"}]
    assert sorted(p["type"] for p in old["passages"]) == ["later", "noise", "valid"]
    now = rows["freshness--7-now"]
    assert now["rule"] == "newest" and "as_of" not in now and now["answers"] == ["2018"]
    assert sorted(p["type"] for p in now["passages"]) == ["noise", "outdated", "valid"]
    assert rows["freshness-8-asof-2019-02-14"]["aliases"] == ["R.D.C."]


def test_the_script_writes_a_qa_file_whose_passages_carry_date_and_source(situated, tmp_path):
    out = tmp_path / "fresh.jsonl"
    subprocess.run([sys.executable, str(SCRIPT), "--input", str(situated), "--questions", "4", "--out", str(out)],
                   check=True, capture_output=True, cwd=ROOT)
    name, examples = load_dataset(str(out))
    assert [e.metadata["rule"] for e in examples] == ["newest", "as-of", "newest", "as-of"]
    # where one exists, the as-of row is one whose answer is not the newest
    assert all(e.answers != [e.metadata["newest_answer"]] for e in examples if e.metadata["rule"] == "as-of")
    assert all(p.metadata["date"] and p.metadata["source"] for e in examples for p in e.passages)
    assert out.read_text() == "".join(json.dumps(r) + "\n" for r in fs.dev_rows(situated, 0, 4, Counter()))


def test_the_registered_freshness_set_loads_from_the_repo():
    _, examples = load_dataset("freshness")
    assert len(examples) == 100 and Counter(e.metadata["rule"] for e in examples) == {"newest": 50, "as-of": 50}
    for example in examples:
        dated = [p for p in example.passages if p.metadata["type"] != "noise"]
        assert len(dated) >= 2 and all(len(p.metadata["date"]) in (4, 10) for p in dated)
        assert all(p.metadata["source"].startswith("archive-") for p in example.passages)
        assert any(example.answers[0] in p.text for p in dated if p.metadata["type"] == "valid")
        assert example.metadata["wrong_answers"] and example.tangles == ["temporal"]


def test_the_qa_format_keeps_a_passage_s_other_fields_as_its_metadata(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"question": "q", "answers": ["a"], "passages": [
        {"id": "p1", "text": "t", "date": "2019-04-07", "source": "archive-3", "authority": 2}]}) + "\n")
    passage = load_dataset(str(path))[1][0].passages[0]
    assert passage.metadata == {"date": "2019-04-07", "source": "archive-3", "authority": 2}


def test_as_of_correct_wants_the_answer_valid_then_and_no_other():
    _, examples = load_dataset("freshness")
    as_of = next(e for e in examples if e.metadata["rule"] == "as-of")
    valid, wrong = as_of.answers[0], as_of.metadata["wrong_answers"][0]

    def score(text, example=as_of, unknown=False):
        answer = Answer(question=example.question, method="concat", text=text, is_unknown=unknown)
        return compute(["as_of_correct", "accuracy"], answer, example)

    assert score(f"{valid} [1]") == {"as_of_correct": 1.0, "accuracy": 1.0}
    assert score(f"{valid}, earlier {wrong}") == {"as_of_correct": 0.0, "accuracy": 1.0}
    assert score(wrong)["as_of_correct"] == 0.0 and score("unknown", unknown=True)["as_of_correct"] == 0.0
    plain = next(e for e in examples if e.metadata["rule"] == "newest")
    assert score(plain.answers[0], plain)["as_of_correct"] is None


def test_an_alias_of_the_valid_answer_counts():
    example = QAExample(id="x", question="who won as of 2019", answers=["RDC"],
                        metadata={"as_of": "2019", "aliases": ["R.D.C. Dance"], "wrong_answers": ["BSD"]})
    answer = Answer(question=example.question, method="concat", text="R.D.C. Dance won it")
    assert compute(["as_of_correct"], answer, example)["as_of_correct"] == 1.0
