"""Rule ``asked-band``: a question naming a weight, length, age or age group is answered from the row whose band
holds it (small copies of dev asks of benchmarks/data/people_docs)."""

import math

import pytest

from tanglerag.methods.ledger.banded import Band, asked_band, asked_point, bands
from tanglerag.types import Passage
from tests.conftest import as_retrieved


@pytest.mark.parametrize(("text", "band"), [
    ("| Large | 25–40 kg | £55 |", Band("mass", 25, 40)),
    ("| Giant | over 40 kg | £70 |", Band("mass", 40, math.inf)),
    ("| Small | up to 10 kg | £38 |", Band("mass", 0, 10)),
    ("Senior (65+)", Band("age", 65, math.inf)),
    ("Weekday matinees for over-65s", Band("age", 65, math.inf)),
    ("under 5s go free", Band("age", 0, 4)),
    ("Juniors aged 5-11", Band("age", 5, 11)),
    ("| U9 – U12 | £20 |", Band("group", 9, 12)),
    ("U8 and under was £15", Band("group", 0, 8)),
    ("the Under 10s", Band("group", 10, 10)),
    ("Car or small van (up to 5 m)", Band("length", 0, 5)),
])
def test_a_band_is_read_as_people_write_it(text, band):
    assert bands(text) == {band}


def test_no_band_is_read_from_ranges_of_other_things_or_backwards_ones():
    assert bands("open 9-5 m") == set() and bands("a 10-25 minute walk") == set()
    assert bands("Parking for 3 hours costs £4") == set() and bands("Fares: adult £3") == set()


@pytest.mark.parametrize(("question", "point"), [
    ("What does Pelton Dog Grooming charge for a full groom for a 30 kg labrador?", Band("mass", 30, 30)),
    ("How much is a ticket for a 78-year-old?", Band("age", 78, 78)),
    ("What are the monthly subs for a player in Brackley Juniors' Under 10s?", Band("group", 10, 10)),
    ("What time does the museum open?", None),
    ("How much is parking for 3 hours?", None),
    ("What do dogs of 10-25 kg pay?", None),  # a band asked about is asked-scope's: no point to place
])
def test_the_point_a_question_names(question, point):
    assert asked_point(question) == point


SUBS = as_retrieved([  # h-brackley-juniors-1
    Passage(id="fees", title="Brackley Juniors FC - subs and fees",
            text="| Age group | Subs per month |\n|---|---|\n| U7 – U8 | £15 |\n| U9 – U12 | £20 |\n| U13 – U16 | £25 |"),
    Passage(id="other", title="Dunsby Town Juniors", text="Dunsby Town Juniors: subs are £18 a month for every team."),
])
QUESTION = "What are the monthly subs for a player in Brackley Juniors' Under 10s?"


def test_a_value_of_another_bands_row_is_read_again_from_the_row_holding_the_asked_point():
    got = asked_band("£15 [1]", ["fees"], SUBS, QUESTION, {"fees", "other"})
    assert got.text == "£20 [1]" and got.cited == ["fees"] and not got.unknown
    assert got.why == "asked-band: £15 is stated for another band than the question's; the passages state £20 for it"


def test_a_value_the_asked_row_states_or_no_band_holds_stands():
    assert asked_band("£20 [1]", ["fees"], SUBS, QUESTION, {"fees"}).why == ""
    assert asked_band("£18 [2]", ["other"], SUBS, QUESTION, {"fees", "other"}).why == ""  # no band: another club's
    assert asked_band("£15 [1]", ["fees"], SUBS, "What are the subs for the Under 20s?", {"fees"}).why == ""


def test_a_value_no_passage_on_topic_states_is_read_from_the_asked_band_and_a_sentence_of_two_bands_gives_its_own():
    """h-pelton-dog-grooming-1 and h-dunsby-park-and-ride-1: a value after each band it names."""
    passages = as_retrieved([
        Passage(id="prices", title="Price list", text="| Medium | 10–25 kg | £45 |\n| Large | 25–40 kg | £55 |"),
        Passage(id="faq", title="FAQ", text="Please give us 48 hours' notice."),
        Passage(id="mobile", title="Muddy Paws", text="Medium dogs: full groom £48")])
    got = asked_band("£48 [2]", ["faq"], passages, "What is a full groom for a 30 kg labrador?", {"prices", "faq"})
    assert got.text == "£55 [1]" and got.why.startswith("asked-band: no passage on topic states £48")
    fares = as_retrieved([Passage(id="c", title="Carnforth", text="Fares: under-19s £1.50, over-60s £2.")])
    assert asked_band("£2 [1]", ["c"], fares, "What is the fare for my 17-year-old?", {"c"}).text == "£1.50 [1]"
    assert asked_band("£1.50 [1]", ["c"], fares, "What is the fare for my 17-year-old?", {"c"}).why == ""


def test_a_value_written_before_its_band_is_that_bands_and_a_shorter_amount_is_not_found_inside_a_longer():
    """A review's cases: "£15 for U7 - U8, £20 for U9 - U12" pairs each value with the band of its part; "£5" is
    not the start of "£55"."""
    subs = as_retrieved([Passage(id="s", title="Subs", text="£15 for U7 - U8, £20 for U9 - U12, £25 for U13 - U16.")])
    question = "What are the subs for the Under 10s?"
    assert asked_band("£20 [1]", ["s"], subs, question, {"s"}).why == ""
    assert asked_band("£15 [1]", ["s"], subs, question, {"s"}).text == "£20 [1]"
    sizes = as_retrieved([Passage(id="p", title="Prices", text="Large 25-40 kg £55, small up to 10 kg £5.")])
    assert asked_band("£5 [1]", ["p"], sizes, "What is it for a 30 kg dog?", {"p"}).text == "£55 [1]"


def test_counts_of_other_things_and_amounts_are_no_bands_or_points():
    assert bands("Groups of 10 and over: £6 each.") == set() and bands("2 St Ann's Row") == set()
    assert asked_point("How much for juniors aged 5-11?") is None and asked_point("Price for a 5-11-year-old?") is None
    assert asked_point("Is a £1.5m house taxed?") is None and asked_point("Shipping for 1,500 kg?") == Band(
        "mass", 1500, 1500)
    assert bands("500 g - 2 kg") == {Band("mass", 0.5, 2)}
    assert [(b.measure, round(b.low, 4), b.high) for b in bands("6 ft to 2 m")] == [("length", 1.8288, 2)]
