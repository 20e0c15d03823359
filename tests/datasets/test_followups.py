"""The follow-up set (issue 52, item 1): benchmarks/followups.py builds conversations from AmbigNQ-format records and
scores the follow-up asked alone, made standalone from the conversation, and the gold standalone question."""

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from tanglerag.settings import Settings
from tanglerag.testing import canned_runtime

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("followups", ROOT / "benchmarks" / "followups.py")
assert _spec is not None and _spec.loader is not None
fu = sys.modules["followups"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fu)

SANG = {"id": "1", "question": "Who sang i fooled around and fell in love?", "annotations": [
    {"type": "multipleQAs", "qaPairs": [
        {"question": "Who sang i fooled around and fell in love in 1985?", "answer": ["T. G. Sheppard"]},
        {"question": "Who sang i fooled around and fell in love in 1976?", "answer": ["Mickey Thomas"]}]}]}
RECORDS = [
    SANG,
    {"id": "2", "question": "Who plays the doctor in dexter season 1?",
     "annotations": [{"type": "singleAnswer", "answer": ["Tony Goldwyn"]}]},  # not ambiguous
    {"id": "3", "question": "Who won the final hoh big brother 20?", "annotations": [{"type": "multipleQAs", "qaPairs": [
        {"question": "Who won the final vote in the American reality show Big Brother 20?", "answer": ["Kaycee"]},
        {"question": "Who won the final hoh big brother 20 who is a houseguest?", "answer": ["Kaycee"]}]}]},
]


def test_a_disambiguation_that_adds_words_at_the_end_becomes_a_follow_up():
    assert fu.added_at_end("Who sang X?", "Who sang X in 1976?") == "in 1976"
    assert fu.added_at_end("Who sang X?", "Who first sang X?") is None  # not at the end
    assert fu.added_at_end("Who won X?", "Who won X who is a houseguest?") is None  # a new clause
    [row] = fu.rows(RECORDS)  # record 2 is not ambiguous; record 3's answers are one and its edits do not qualify
    assert row == {"id": "1", "question": "And in 1985?", "history": [
        {"role": "user", "content": SANG["question"]}, {"role": "assistant", "content": "Mickey Thomas"}],
        "standalone": "Who sang i fooled around and fell in love in 1985?", "answers": ["T. G. Sheppard"],
        "other_answers": ["Mickey Thomas"], "original": SANG["question"]}


def test_the_benchmark_scores_each_condition(tmp_path):
    source = tmp_path / "ambignq.json"
    source.write_text(json.dumps(RECORDS))
    followups = tmp_path / "set.jsonl"
    fu.build(argparse.Namespace(input=source, source="ambignq", questions=None, seed=0, out=followups))
    rules = [("Standalone question:", "Who sang i fooled around and fell in love in 1985?"),
             ("And in 1985", "Mickey Thomas"), ("in 1985", "T. G. Sheppard")]
    runtime = canned_runtime(Settings.load(overrides=[f"cache_dir={tmp_path}"]), rules, default="unknown")
    args = argparse.Namespace(set=followups, method="closed-book", limit=None, no_answer=False, set_option=None,
                              out=tmp_path / "out")
    table = fu.run(args, runtime)
    assert table["with"] == {"question_f1": 100.0, "rewrites": 1, "recall": 100.0, "other": 0.0}
    assert table["without"]["rewrites"] == 0 and table["without"]["question_f1"] < 50
    assert table["without"]["recall"] == 0.0 and table["without"]["other"] == 100.0
    assert table["gold"]["question_f1"] == 100.0
    assert "| with | 100.0 | 1 | 100.0 | 0.0 |" in (tmp_path / "out" / "results.md").read_text()
    assert len((tmp_path / "out" / "conversations.jsonl").read_text().splitlines()) == 1


def test_the_rule_measure_counts_follow_ups_caught_and_needless_rewrites(tmp_path):
    followups = tmp_path / "set.jsonl"
    followups.write_text(json.dumps({"question": "And in 1985?"}) + "\n")
    alone = tmp_path / "nq.jsonl"
    alone.write_text("".join(json.dumps({"question": q}) + "\n" for q in [
        "who was the actor that played ben stone on law and order", "when did they stop cigarette advertising"]))
    assert fu.rule(argparse.Namespace(set=followups, standalone=alone)) == {
        "followups": 1, "caught_pct": 100.0, "standalone": 2, "needless_pct": 50.0}


ASQA = {"sample_id": 7, "ambiguous_question": SANG["question"], "annotations": [{"knowledge": [
    {"wikipage": "I've Been Lonely for So Long", "content": "Mickey Thomas sang the 1976 recording of the song " * 3},
    {"wikipage": "Short", "content": "too short to keep"}]}],
    "qa_pairs": [{"question": q["question"], "short_answers": q["answer"], "wikipage": None,
                  "context": "T. G. Sheppard recorded a country cover of the song in 1985 " * 3 if "1985" in q["question"]
                  else "Mickey Thomas sang the 1976 recording of the song " * 3}
                 for q in SANG["annotations"][0]["qaPairs"]]}


def test_an_asqa_conversation_carries_the_passages_of_every_reading_and_each_condition_is_answered_over_them(
        tmp_path):
    [row] = fu.asqa_rows([ASQA])
    assert (row["question"], row["answers"], row["other_answers"]) == ("And in 1985?", ["T. G. Sheppard"],
                                                                       ["Mickey Thomas"])
    assert [p["id"] for p in row["passages"]] == ["7-0", "7-1"]  # the short one and the repeated context dropped
    assert "Sheppard" in row["passages"][1]["text"]
    followups = tmp_path / "set.jsonl"
    followups.write_text(json.dumps(row) + "\n")
    rules = [("Standalone question:", row["standalone"]), ("Question: And in 1985", "Mickey Thomas [1]"),
             ("Question: Who sang", "T. G. Sheppard [2]")]
    runtime = canned_runtime(Settings.load(overrides=[f"cache_dir={tmp_path}"]), rules, default="unknown")
    args = argparse.Namespace(set=followups, method="concat", limit=None, no_answer=False, set_option=None,
                              out=tmp_path / "out")
    table = fu.run(args, runtime)
    assert (table["without"]["recall"], table["without"]["other"]) == (0.0, 100.0)
    assert (table["with"]["recall"], table["with"]["other"]) == (100.0, 0.0) == (table["gold"]["recall"],
                                                                             table["gold"]["other"])
    stored = json.loads((tmp_path / "out" / "conversations.jsonl").read_text())
    assert stored["with"]["answer"].startswith("T. G. Sheppard")
    # the canned replies above would come back without passages too: each answer's prompt must hold both readings'
    asked = [messages[-1].content for messages, _ in runtime.llm.backend.requests
             if "Standalone question:" not in messages[-1].content]
    assert len(asked) == 2  # the follow-up alone, and the standalone question ("with" and "gold": one, cached)
    assert all("Sheppard recorded" in a and "Mickey Thomas sang" in a for a in asked)
