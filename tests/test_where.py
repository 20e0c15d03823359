"""The ``--where`` language: typed conditions on a document's metadata, read safely, refused in one line naming what
is wrong."""

import datetime

import pytest

from tanglerag.errors import ConfigError, InputError
from tanglerag.settings import Settings
from tanglerag.where import authority_tiers, date_text, document_value, parse_where

DOCS = {
    "new": {"date": "2024-03-01", "source": "Example.org", "authority": "official", "meta": {"lang": "FR", "n": 10}},
    "old": {"date": "2023", "source": "example.org", "authority": 1, "meta": {"lang": "fr", "n": "9"}},
    "monde": {"date": "2024-05", "source": "Le Monde", "authority": "news", "meta": {"tags": ["Law", "tax"]}},
    "bare": {},
    "broken": {"date": "soon", "source": "Le Monde", "authority": "gossip"},
}


def _passing(text: str, **tiers: float) -> list[str]:
    where = parse_where(text, tiers or None) if tiers else parse_where(text)
    assert where is not None
    return [name for name, metadata in DOCS.items() if where.matches(metadata)]


@pytest.mark.parametrize("text, passing", [
    ("date >= 2024-01-01", ["new", "monde"]),
    ("date < 2024", ["old"]),  # a year stands for its first day
    ("date = 2024", ["new", "monde"]),  # equality at the precision given: any day of 2024
    ("date = 2024-05", ["monde"]),
    ("date in (2023, 2024-03-01)", ["new", "old"]),
    ("source = example.org", ["new", "old"]),  # text without regard to case
    ("source in (example.org, 'le monde')", ["new", "old", "monde", "broken"]),
    ("source != example.org", ["monde", "broken"]),  # a passage without the field matches no condition on it
    ("authority >= news", ["new", "old", "monde"]),  # tiers mapped to numbers: official 3, news 1
    ("authority > 1", ["new"]),
    ("meta.lang = fr", ["new", "old"]),
    ("meta.n > 9.5", ["new"]),  # numbers when both sides are, stored as a number or as text
    ("meta.tags = law", ["monde"]),  # a list matches when one of its items does
    ("meta.tags != law", []),
    ("date >= 2024-01-01 AND source IN (example.org) and meta.lang = fr", ["new"]),
    ('source = "Le Monde"', ["monde", "broken"]),  # an unreadable date elsewhere does not hide the source
])
def test_conditions_compare_typed_values(text, passing):
    assert _passing(text) == passing


def test_blank_is_no_filter_and_quotes_keep_spaces_and_punctuation():
    assert parse_where("") is None and parse_where("   ") is None
    where = parse_where("meta.title = 'a; DROP TABLE passages'")
    assert where is not None and where.matches({"meta": {"title": "A; drop table passages"}})


@pytest.mark.parametrize("text, message", [
    ("dat >= 2024", r"^where 'dat >= 2024': unknown field 'dat': filter on date, source, authority or meta\.KEY$"),
    ("meta. = x", "unknown field 'meta.'"),
    ("1=1", "unknown field '1'"),
    ("date >> 2024", "expected a value after 'date', got '>'"),
    ("date", "ends where an operator after 'date' was expected"),
    ("date >=", "ends where a value after 'date' was expected"),
    ("source in a.org", r"'in' takes a list in parentheses"),
    ("source in (a.org, b.org", "ends where ',' or '\\)' in the list was expected"),
    ("date >= 2024 or source = x", "expected 'and' between conditions, got 'or'"),
    ("source = Le Monde", "expected 'and' between conditions, got 'Monde'"),
    ("source = a; DROP TABLE passages", r"cannot read '; DROP TABLE passage' \(character 11\); quote text"),
    ("date >= 2024-02-30", r"date value '2024-02-30' cannot be read: give an ISO date"),
    ("date = ''", "date value '' cannot be read"),
    ("authority > offical", r"authority value 'offical' cannot be read: give a number or a tier \(community, news, "),
])
def test_what_cannot_be_read_is_one_line_naming_it(text, message):
    with pytest.raises(InputError, match=message) as caught:
        parse_where(text)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("where ")


def test_tier_names_wait_for_the_tiers_in_force():
    assert parse_where("authority >= gov", tiers=None) is not None  # settings are checked before tiers are known
    assert _passing("authority >= gov", gov=2.0, official=3.0) == ["new"]
    with pytest.raises(InputError, match="authority value 'gov'"):
        parse_where("authority >= gov")


def test_document_values_read_as_provenance_does():
    assert document_value(DOCS["new"], "date", {}) == datetime.date(2024, 3, 1)
    assert document_value(DOCS["broken"], "date", {}) is None and document_value(DOCS["broken"], "authority", {}) is None
    assert document_value({"source": "  x.org "}, "source", {}) == "x.org"
    assert [date_text(DOCS[name]) for name in ("new", "old", "monde", "bare", "broken")] == [
        "2024-03-01", "2023", "2024-05", None, None]


def test_a_bad_where_setting_is_refused_with_the_settings():
    assert Settings.load(overrides=["retrieval.where=date >= 2024-01-01"]).retrieval.where == "date >= 2024-01-01"
    with pytest.raises(ConfigError, match="(?s)retrieval.where.*unknown field 'dat'"):
        Settings.load(overrides=["retrieval.where=dat >= 2024"])


def test_authority_tiers_come_from_the_section_that_declares_them():
    assert authority_tiers(Settings.load())["official"] == 3.0
    assert authority_tiers(Settings.load(overrides=["ledger.authority_tiers={gov: 5}"])) == {"gov": 5.0}
