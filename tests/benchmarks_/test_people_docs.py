"""Issue 67's dev-set scorer (benchmarks/people_docs.py): a date is matched as a date, and a scoring fix reaches the
outcomes stored before it. No model."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import each other by module name, as run from there

import people_docs as pd  # noqa: E402


def _ask(lead: list[str], not_asserted: list[str] | None = None) -> pd.Ask:
    return pd.Ask(id="x-1", folder="x", kind="misread", question="When is the migration?",
                  expect=pd.Expect(lead=lead, not_asserted=not_asserted or [], report="none"))


def test_an_iso_date_holds_the_day_and_month_a_person_writes():
    assert pd.has("2024-06-18 [1]", "18 June")
    assert pd.has("2024-06-18 [1]", "18 June 2024")
    assert not pd.has("2024-06-18 [1]", "8 June")
    assert not pd.has("2024-13-18 [1]", "18 June")


def test_a_metric_unit_is_the_same_value_in_either_spelling():
    assert pd.has("41 meters [1]", "41 metres") and pd.has("41 metres [1]", "41 meters")
    assert pd.has("2 Liters a day", "2 litres") and pd.has("3 kilometers", "3 kilometres")
    assert not pd.has("14 meters [1]", "41 metres")


def test_a_stored_outcome_is_led_again_by_its_first_line():
    row = pd.Outcome(id="x-1", kind="misread", half="tune", method="concat", right=False, fully_right=False,
                     report="none", first_line="2024-06-18 [2]", failures=["lead '18 June' not in the first line"])
    again = pd.relead(row, {"x-1": _ask(["18 June"])})
    assert (again.right, again.fully_right, again.failures) == (True, True, [])


def test_a_wrong_value_stated_keeps_the_outcome_wrong_when_the_lead_is_found():
    row = pd.Outcome(id="x-1", kind="misread", half="tune", method="concat", right=False, fully_right=False,
                     report="none", first_line="2024-06-18, not 14 June [2]",
                     failures=["lead '18 June' not in the first line", "'14 June' asserted"])
    again = pd.relead(row, {"x-1": _ask(["18 June"], ["14 June"])})
    assert (again.right, again.fully_right, again.failures) == (False, False, ["'14 June' asserted"])


def test_an_outcome_whose_lead_is_still_missing_is_left_as_stored():
    row = pd.Outcome(id="x-1", kind="misread", half="tune", method="concat", right=False, fully_right=False,
                     report="none", first_line="2024-06-14 [2]", failures=["lead '18 June' not in the first line"])
    assert pd.relead(row, {"x-1": _ask(["18 June"])}) is row
