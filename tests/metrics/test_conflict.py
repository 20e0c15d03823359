"""RAMDocs' strict score, what leaks through, and the auto report's one score, on hand-made records."""

from tanglerag.datasets.base import QAExample
from tanglerag.metrics.registry import compute
from tanglerag.types import Answer, Passage

EXAMPLE = QAExample(
    id="q", question="When was Michael Jordan born?", answers=["1963", "1956"],
    passages=[Passage(id="d0", text="...", metadata={"type": "correct"}),
              Passage(id="d1", text="...", metadata={"type": "misinfo"}),
              Passage(id="d2", text="...", metadata={"type": "noise"})],
    metadata={"wrong_answers": ["1998"]})
NAMES = ["ramdocs_strict", "answer_recall", "misinfo_leak", "noise_cited"]


def scores(text: str, citations: list[str] | None = None, example: QAExample = EXAMPLE) -> dict:
    unknown = text == "unknown"
    answer = Answer(question=example.question, method="m", text=text, citations=citations or [], is_unknown=unknown)
    return compute(NAMES, answer, example)


def test_every_gold_answer_and_no_wrong_one_is_strictly_right():
    assert scores("1963 (basketball player) [1]\n1956 (scientist) [2]", ["d0"]) == {
        "ramdocs_strict": 1.0, "answer_recall": 1.0, "misinfo_leak": 0.0, "noise_cited": 0.0}


def test_all_gold_plus_one_wrong_answer_is_strictly_wrong_and_leaks():
    got = scores("1963 [1]\n1956 [2]\n1998 [3]", ["d0", "d2"])
    assert got == {"ramdocs_strict": 0.0, "answer_recall": 1.0, "misinfo_leak": 1.0, "noise_cited": 1.0}


def test_partial_and_unknown_answers():
    assert scores("1963 [1]")["answer_recall"] == 0.5 and scores("1963 [1]")["ramdocs_strict"] == 0.0
    assert scores("unknown") == {"ramdocs_strict": 0.0, "answer_recall": 0.0, "misinfo_leak": 0.0,
                                 "noise_cited": 0.0}


def test_answers_match_whole_words_and_labels_absent_mean_not_applicable():
    assert scores("born in 19630")["answer_recall"] == 0.0  # "1963" is not inside another number
    bare = QAExample(id="b", question="q", answers=["Paris"])
    assert scores("Paris", example=bare) == {"ramdocs_strict": 1.0, "answer_recall": 1.0, "misinfo_leak": None,
                                             "noise_cited": None}


def test_the_tangle_score_is_recall_unless_a_wrong_answer_leaks():
    def tangle(text: str, example: QAExample = EXAMPLE) -> float | None:
        return compute(["tangle_score"], Answer(question="q", method="m", text=text), example)["tangle_score"]

    assert tangle("1963 [1]") == 0.5 and tangle("1963\n1956") == 1.0
    assert tangle("1963\n1956\n1998") == 0.0  # every gold answer, and the misinformation too
    assert tangle("Paris", QAExample(id="b", question="q", answers=["Paris"])) == 1.0  # no wrong answers known


def _reported(*sides: tuple[str, str], kind: str = "misinformation") -> Answer:
    """An answer whose trace holds one report with these (answer, verdict) sides."""
    from tanglerag.conflicts import ConflictReport, ConflictStep, Side
    from tanglerag.trace import Trace

    report = ConflictReport(kind=kind, sides=[Side(answer=a, verdict=v, passages=["d0"]) for a, v in sides])
    return Answer(question="q", method="m", text="1963", trace=Trace(steps=[ConflictStep(reports=[report])]))


def _conflict_scores(answer: Answer, example: QAExample = EXAMPLE) -> tuple[float | None, float | None]:
    got = compute(["conflict_recall", "false_conflict_rate"], answer, example)
    return got["conflict_recall"], got["false_conflict_rate"]


MISINFO = EXAMPLE.model_copy(update={"tangles": ["ambiguous", "misinformation", "noise"]})
CLEAN = EXAMPLE.model_copy(update={"tangles": ["ambiguous", "noise"], "metadata": {"wrong_answers": []}})


def test_conflict_recall_counts_a_report_that_rejects_or_disputes_the_false_answer():
    assert _conflict_scores(_reported(("1963", "kept"), ("1998", "rejected")), MISINFO) == (1.0, None)
    assert _conflict_scores(_reported(("1963", "disputed"), ("born in 1998", "disputed")), MISINFO) == (1.0, None)
    assert _conflict_scores(_reported(("1963", "kept"), ("1998", "kept"), kind="complementary"), MISINFO) == (0.0, None)
    assert _conflict_scores(_reported(("1963", "rejected"), ("1998", "kept")), MISINFO) == (0.0, None)  # wrong side
    assert _conflict_scores(Answer(question="q", method="m", text="1963"), MISINFO) == (None, None)  # no report


def test_false_conflict_rate_counts_conflicts_where_the_labels_have_none():
    assert _conflict_scores(_reported(("1963", "kept"), ("1956", "rejected")), CLEAN) == (None, 1.0)
    assert _conflict_scores(_reported(("1963", "kept"), ("1956", "kept"), kind="complementary"), CLEAN) == (None, 0.0)
    # wrong answers listed, but no misinformation document states them (RAMDocs has 30 such dev questions)
    unstated = CLEAN.model_copy(update={"metadata": {"wrong_answers": ["1998"]}})
    assert _conflict_scores(_reported(("1963", "kept"), ("1956", "rejected")), unstated) == (None, 1.0)


def test_dated_answers_or_conflicting_passages_are_conflicts_the_gold_knows():
    """The freshness set's older answers are outdated, conflictQA's counter-memory conflicts: a report there is
    not a false conflict. A temporal question without known wrong answers (SituatedQA) has none."""
    outdated = _reported(("2021", "kept"), ("2017", "rejected"), kind="outdated")
    dated = QAExample(id="f", question="Who?", answers=["2021"], tangles=["temporal"],
                      metadata={"wrong_answers": ["2017"], "as_of": "2022"})
    assert _conflict_scores(outdated, dated) == (None, None)
    assert _conflict_scores(outdated, dated.model_copy(update={"metadata": {}})) == (None, 1.0)
    assert _conflict_scores(outdated, QAExample(id="c", question="Who?", answers=["2021"], tangles=["conflict"])) == (
        None, None)
