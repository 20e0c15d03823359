"""Rule ``range-end``: asked when a place closes, the first time of a range is read as its end (and the other way
round); h-copper-kettle-1."""

from tanglerag.methods.ledger.time_range import range_end
from tanglerag.types import Passage
from tests.conftest import as_retrieved

HOURS = as_retrieved([Passage(id="listing", title="Copper Kettle, Harnby", text="Opening hours\nSunday 10am–4pm\n"
                                                                                 "Weekdays 09:30 to 17:00")])


def test_the_start_of_a_range_given_for_a_closing_time_is_read_as_its_end_and_the_end_for_an_opening_as_its_start():
    assert range_end("10am [1]", ["listing"], HOURS, "What time does it close on a Sunday?") == (
        "4pm [1]", "range-end: 10am opens 10am-4pm")
    assert range_end("17:00 [1]", ["listing"], HOURS, "When does it open on weekdays?")[0] == "09:30 [1]"


def test_a_time_in_no_range_or_a_question_asking_both_ends_or_neither_stays():
    assert range_end("4pm [1]", ["listing"], HOURS, "What time does it close on a Sunday?") == ("4pm [1]", "")
    assert range_end("10am [1]", ["listing"], HOURS, "When does it open and close?") == ("10am [1]", "")
    assert range_end("10am [1]", ["listing"], HOURS, "What are the Sunday hours?") == ("10am [1]", "")
    assert range_end("10am [1]", [], HOURS, "What time does it close?") == ("10am [1]", "")  # no cited passage
