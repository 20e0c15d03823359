"""Issue 60, item 4: freshness v2 (benchmarks/freshness_v2.py) on a hand-made SituatedQA-format file, and the tune /
check split of benchmarks/halves.py. No model: spaCy's tagger words the statements."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import each other by module name, as run from there

import freshness_v2 as fv2  # noqa: E402
import halves  # noqa: E402

from tanglerag.types import Passage, RetrievedPassage  # noqa: E402


def _rec(qid, question, date, date_type, answer):
    return {"question": question, "id": qid, "edited_question": f"{question} as of {date}", "date": date,
            "date_type": date_type, "answer": [answer], "any_answer": []}


@pytest.mark.parametrize(("question", "answer", "expected"), [
    ("when did england last get into semi finals", "2018", "england last got into semi finals in 2018"),
    ("how many medals does usa have in snowboarding", "31", "usa has 31 medals in snowboarding"),
    ("who did green bay lose to in the playoffs last year", "Buccaneers",
     "green bay lost to Buccaneers in the playoffs last year"),
    ("when is the new jurassic world game coming out as of 2018", "June 12, 2018",
     "the new jurassic world game is coming out on June 12, 2018"),
    ("who is the governor of the virgin islands", "Albert Bryan", "Albert Bryan is the governor of the virgin islands"),
])
def test_a_question_becomes_a_statement_that_does_not_quote_it(question, answer, expected):
    maker = fv2.statement_maker(question)
    assert maker is not None and expected in maker(answer)


def test_build_writes_rows_without_passages_and_one_corpus_in_two_variants(tmp_path):
    source = tmp_path / "temp.dev.jsonl"
    records = [_rec(7, "who is the governor of the virgin islands", "January 05, 2015", "start", "Kenneth Mapp"),
               _rec(7, "who is the governor of the virgin islands", "January 07, 2019", "start", "Albert Bryan"),
               _rec(8, "how many medals does usa have in snowboarding", "2014", "start", "24"),
               _rec(8, "how many medals does usa have in snowboarding", "2018", "start", "31")]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    rows, meta, text, _ = fv2.build(source, questions=2, seed=0)
    assert {r["rule"] for r in rows} == {"newest", "as-of"} and len(rows) == 4
    assert all("passages" not in r and r["id"].startswith("freshness2-") for r in rows)
    assert [p["id"] for p in meta] == [p["id"] for p in text] and len(meta) == 4
    for plain, dated in zip(meta, text, strict=True):
        assert "date" not in dated["metadata"] and fv2.passage_date_text(dated["text"]) == plain["metadata"]["date"]
        assert fv2.passage_date_text(plain["text"]) is None and "?" not in plain["text"]
    passage = {t["passage"]: t["answer"] for r in rows for t in r["timeline"]}
    assert set(passage) == {p["id"] for p in meta}


def _hit(pid, text, date, rank):
    return RetrievedPassage(passage=Passage(id=pid, text=text, metadata={"date": date}), score=1.0, rank=rank)


def test_the_rule_takes_the_passages_about_the_question_then_the_newest_known_at_the_moment():
    hits = [_hit("a", "usa has 24 medals in snowboarding", "2014", 1),
            _hit("b", "usa has 31 medals in snowboarding", "2018", 2),
            _hit("c", "Alina Zagitova won the gold in figure skating", "2019", 3)]
    rule = fv2.RULES["repeat the question's words, then newest"]
    assert rule(hits, "how many medals does usa have in snowboarding").passage.id == "b"
    assert rule(hits, "how many medals does usa have in snowboarding as of 2015").passage.id == "a"
    assert fv2.RULES["newest in top-k"](hits, "how many medals does usa have in snowboarding").passage.id == "c"


def test_halves_are_stable_and_keep_a_questions_rows_together():
    assert halves.half("freshness2-123-now") == halves.half("freshness2-123-asof-2019-05-01")
    assert halves.half("freshness-9-now") == halves.half("freshness-9-asof-2001")
    # pinned: the split is part of every reported figure, so a change to it must show here
    assert [halves.half(f"ramdocs-{i:04d}") for i in range(4)] == ["check", "tune", "tune", "tune"]
    split = halves.split(f"q{i}" for i in range(1000))
    assert 430 < len(split["tune"]) < 570 and len(split["tune"]) + len(split["check"]) == 1000
