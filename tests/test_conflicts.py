"""The core conflict report: document provenance parsed in one place (bad dates and tiers named, never dropped), the
deterministic quote and answer checks, and the step that renders the report and reads back from a trace's JSON."""

import datetime

import pytest

from tanglerag.conflicts import (
    Claim,
    ConflictReport,
    ConflictStep,
    DocumentMeta,
    PolicyTrial,
    Side,
    answer_in_passage,
    quote_in_passage,
)
from tanglerag.errors import InputError
from tanglerag.trace import Trace


@pytest.mark.parametrize(("value", "date", "precision"), [
    ("2024-05-03", datetime.date(2024, 5, 3), "day"),
    ("2024-05", datetime.date(2024, 5, 1), "month"),
    ("2024", datetime.date(2024, 1, 1), "year"),
    (2024, datetime.date(2024, 1, 1), "year"),
    ("2024-05-03T10:00:00Z", datetime.date(2024, 5, 3), "day"),
    (datetime.date(2020, 2, 29), datetime.date(2020, 2, 29), "day"),
    (None, None, None),
])
def test_dates_are_read_as_iso_dates_months_or_years(value, date, precision):
    meta = DocumentMeta.from_metadata({"date": value})
    assert (meta.date, meta.date_precision) == (date, precision)


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", "03/05/2024", "20245", True, [2024]])
def test_an_unreadable_date_is_refused_naming_the_field_and_value(value):
    with pytest.raises(InputError, match="metadata field 'date'") as refused:
        DocumentMeta.from_metadata({"date": value})
    assert repr(value) in str(refused.value)


def test_authority_is_a_number_or_a_named_tier_and_an_unknown_tier_names_the_known_ones():
    assert DocumentMeta.from_metadata({"authority": 2}).authority == 2.0
    assert DocumentMeta.from_metadata({"authority": "Official"}).authority == 3.0
    assert DocumentMeta.from_metadata({"authority": "wiki"}, {"wiki": 1.5}).authority == 1.5
    with pytest.raises(InputError, match=r"'authority': unknown tier 'rumour' \(a number, or one of: community, news"):
        DocumentMeta.from_metadata({"authority": "rumour"})
    with pytest.raises(InputError, match="'authority'"):
        DocumentMeta.from_metadata({"authority": True})


def test_source_and_meta_are_kept_and_other_keys_left_alone():
    meta = DocumentMeta.from_metadata({"source": " example.org ", "meta": {"lang": "en"}, "type": "misinfo"})
    assert (meta.source, meta.meta, meta.is_empty()) == ("example.org", {"lang": "en"}, False)
    assert DocumentMeta.from_metadata({"type": "correct", "answer": "x"}).is_empty()
    with pytest.raises(InputError, match="'source'"):
        DocumentMeta.from_metadata({"source": 7})
    with pytest.raises(InputError, match="'meta'"):
        DocumentMeta.from_metadata({"meta": "en"})


def test_a_quote_counts_only_when_the_passage_holds_it_after_normalising():
    passage = "As of the census of 2010, there were 3,559 people in the city."
    assert quote_in_passage("there were 3559 People", passage)
    assert not quote_in_passage("The population of Broken Bow is 3,559.", passage)
    assert not quote_in_passage("", passage)
    assert answer_in_passage("3,559 people", passage) and not answer_in_passage("10,000", passage)


def _step() -> ConflictStep:
    kept = Side(answer="1963", about="the player", passages=["a", "b"], witnesses=2, verdict="kept")
    rejected = Side(answer="1998", about="the player", passages=["c"], witnesses=1, verdict="rejected")
    report = ConflictReport(kind="misinformation", about="the player", sides=[kept, rejected], rule="witnesses 2 vs 1",
                            trials=[PolicyTrial(policy="witnesses", outcome="witnesses 2 vs 1", decided=True)])
    claims = [Claim(answer="1963", passage_id="a", supported=True), Claim(answer="1998", passage_id="c")]
    return ConflictStep(claims=claims, reports=[report], policies=["witnesses", "show-all"],
                        documents={"a": DocumentMeta.from_metadata({"date": "2020"})})


def test_the_step_renders_the_claims_the_sides_and_the_rule():
    step = _step()
    text = "\n".join(step.lines())
    assert step.overall == "misinformation"
    assert "c: 1998 (?) [unsupported: neither quote nor answer found]" in text
    assert "rejected: 1998 - 1 witness(es) <- c" in text and "witnesses: witnesses 2 vs 1" in text
    assert step.headline() == "sources disagree (misinformation): 1 answer(s) rejected, 0 disputed; witnesses 2 vs 1"
    assert ConflictStep().headline() is None and ConflictStep().overall == "none"


def test_the_step_reads_back_from_a_trace_as_itself():
    again = Trace.model_validate_json(Trace(steps=[_step()]).model_dump_json())
    step = again.find(ConflictStep)
    assert step is not None and step.reports[0].sides[1].verdict == "rejected"
    assert step.documents["a"].date == datetime.date(2020, 1, 1)


def test_conflict_recall_and_false_conflict_rate_read_the_report():
    from tanglerag.datasets.base import QAExample
    from tanglerag.metrics.registry import compute
    from tanglerag.types import Answer

    def example(tangles):
        return QAExample(id="q", question="When?", answers=["1963"], tangles=tangles,
                         metadata={"wrong_answers": ["1998"]})

    reported = Answer(question="When?", method="ledger", text="1963", trace=Trace(steps=[_step()]))
    unreported = Answer(question="When?", method="concat", text="1963")
    metrics = ["conflict_recall", "false_conflict_rate"]
    assert compute(metrics, reported, example(["misinformation"])) == {"conflict_recall": 1.0,
                                                                        "false_conflict_rate": None}
    assert compute(metrics, reported, example(["noise"])) == {"conflict_recall": None, "false_conflict_rate": 1.0}
    assert compute(metrics, unreported, example(["misinformation"])) == {"conflict_recall": None,
                                                                          "false_conflict_rate": None}


def test_a_side_set_aside_for_being_later_than_the_moment_reads_as_later_not_rejected():
    """Issue 69: "as of 2024", the 2025 amendment is later than the moment asked about, not false."""
    from tanglerag.conflicts import Side
    from tanglerag.service.chat import _side

    later = Side(answer="240 euros", passages=["p2"], verdict="rejected", note="dated after 2024 (2025-03-01)")
    false = Side(answer="999 euros", passages=["p3"], verdict="rejected", note="fewer independent sources")
    assert (later.label, false.label, Side(answer="x").label) == ("later", "rejected", "kept")
    assert _side(later, "") == "240 euros (1 source, later: dated after 2024 (2025-03-01))"
    assert _side(false, "") == "999 euros (1 source, rejected: fewer independent sources)"
