"""The one registry type: a second item under a known name is refused, the same one again is not; a miss names the
likely intended name; plug-ins of an entry-point group load once, when asked."""

import pytest

from tanglerag.errors import InputError
from tanglerag.registry import DuplicateName, Registry
from tanglerag.trace import STEP_TYPES


def test_a_second_item_under_a_known_name_is_refused_and_the_same_one_is_not():
    table: Registry[object] = Registry("thing")
    first = object()
    table.register("a", first)
    table.register("a", first)  # a module imported twice registers the same object again
    with pytest.raises(DuplicateName, match="two things are named 'a'"):
        table.register("a", object())
    assert table.names() == ["a"] and len(table) == 1


def test_names_keep_registration_order_and_a_miss_suggests_the_closest():
    table: Registry[int] = Registry("colour")
    for n, name in enumerate(("red", "green", "blue")):
        table.register(name, n)
    assert table.names() == ["red", "green", "blue"] and "green" in table and table.find("grey") is None
    with pytest.raises(InputError, match=r"unknown colour 'gren' \(did you mean 'green'\?\); available: blue, green"):
        table.get("gren")


def test_the_check_refuses_an_item_that_does_not_fit_and_version_counts_changes():
    def only_even(name: str, item: int) -> None:
        if item % 2:
            raise ValueError(f"{name} is odd")

    table: Registry[int] = Registry("number", check=only_even)
    table.register("two", 2)
    with pytest.raises(ValueError, match="three is odd"):
        table.register("three", 3)
    before = table.version
    table.remove("two")
    assert table.version == before + 1 and table.names() == []


def test_an_empty_entry_point_group_loads_nothing_once():
    table: Registry[int] = Registry("plug-in", group="tanglerag.tests.no-such-group")
    assert table.names() == [] and table.names() == []


def test_two_trace_step_classes_cannot_claim_one_kind():
    from typing import Literal

    from tanglerag.trace import TraceStep

    assert "personal_context" in STEP_TYPES
    with pytest.raises(DuplicateName):
        class Impostor(TraceStep):  # noqa: F841  (defining it is the test)
            kind: Literal["personal_context"] = "personal_context"
