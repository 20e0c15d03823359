import pytest

from tanglerag.errors import IndexStoreError
from tanglerag.index.trim import TrimLog, apply_separation, pair
from tanglerag.types import Passage, RetrievedPassage


def hits(*ids):
    return [RetrievedPassage(passage=Passage(id=i, text=i), score=1 - n / 10, rank=n + 1) for n, i in enumerate(ids)]


def test_pairs_are_separated_after_k_witnesses(tmp_path):
    log = TrimLog(tmp_path)
    assert log.add_witnesses("q1", ["good"], ["bad", "worse"], judge="llm:phi1", k=2) == []
    state = log.state()
    assert state.witnesses == {pair("good", "bad"): 1, pair("good", "worse"): 1} and state.pending == 2
    assert log.add_witnesses("q2", ["good", "other"], ["bad"], judge="llm:phi1", k=2) == [pair("good", "bad")]
    state = log.state()
    assert state.is_separated("bad", "good") and not state.is_separated("good", "worse")
    assert state.judged_queries == 2 and state.pending == 2  # good-worse, other-bad
    assert log.add_witnesses("q3", ["good"], ["bad"], judge="llm:phi1", k=2) == []  # already separated
    assert log.add_witnesses("q4", ["x"], ["y"], judge="spacy", k=1) == [pair("x", "y")]  # k=1: the public code


def test_undo_truncates_the_log(tmp_path):
    log = TrimLog(tmp_path)
    log.add_witnesses("q1", ["a"], ["b"], judge="j", k=1)
    mark = log.state().last_seq
    log.add_witnesses("q2", ["c"], ["d"], judge="j", k=1)
    assert log.undo(mark) == 2
    assert log.state().separated == {pair("a", "b")}
    assert log.undo(0) == 2 and log.state().separated == set()


def test_separation_drops_the_later_of_two_separated_hits(tmp_path):
    log = TrimLog(tmp_path)
    log.add_witnesses("q", ["p1"], ["p2"], judge="j", k=1)
    kept, dropped = apply_separation(hits("p1", "p2", "p3", "p4"), log.state(), 3)
    assert [h.passage.id for h in kept] == ["p1", "p3", "p4"] and [h.rank for h in kept] == [1, 2, 3]
    assert dropped == [("p2", "p1")]
    kept, _ = apply_separation(hits("p2", "p3", "p1"), log.state(), 3)
    assert [h.passage.id for h in kept] == ["p2", "p3"]  # p1 clashes with the better-ranked p2


def test_damaged_log_and_bad_k_are_clear_errors(tmp_path):
    (tmp_path / "trim_log.jsonl").write_text('{"seq": 1, "kind": "witness", "a": "x"}\n')
    with pytest.raises(IndexStoreError, match="trim_log.jsonl:1: damaged"):
        TrimLog(tmp_path).state()
    with pytest.raises(IndexStoreError, match="at least one witness"):
        TrimLog(tmp_path / "new").add_witnesses("q", ["a"], ["b"], judge="j", k=0)
