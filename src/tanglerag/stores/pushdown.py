"""A ``--where`` as typed tests on a passage's filter fields, for a store to write in its own filter language.

``Where.matches`` compares in Python: dates as dates at the condition's precision, authority as numbers, source
without regard to case, ``meta.KEY`` as numbers when both sides are numbers and else as case-folded text. A store
compares stored values only, so each condition is turned here into tests on values written for that purpose
(``filter_fields`` in ``base.py``, ``meta_fields`` below) that pass exactly the passages ``Where.matches`` passes:

* ``date = 2024-03`` (``in``: any of its values): the document's first day falls within March 2024; a document
  dated 2024 (1 January) does not, as in ``Where``. ``<``, ``>`` and the rest compare that first day.
* ``!=`` holds for a passage that has the field and none of whose values is the one named (a passage without the
  field passes no condition on it, ``!=`` included).
* ``meta.KEY`` keeps its numbers, its text (case-folded, booleans as ``true`` / ``false``) and whether it holds
  anything, in three fields; ordering it (``<``) by a number is exact only while no passage holds text under that
  key (``Where`` would order text as text), which the store is asked (``FilterClause.text_field``).

What cannot be told this way (ordering text, a key a store field cannot be named after) is ``refused`` with the
condition named: never answered from a partial filter.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tanglerag.stores.base import AUTHORITY, DATE_DAYS, SOURCE, last_day
from tanglerag.where import Condition, Where

META_PREFIX = "_tr_meta_"
_META_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ORDERING = {"<", "<=", ">", ">="}


@dataclass(frozen=True)
class Between:
    """The field holds a number within the bounds (None: open on that side; ``*_open``: the bound itself is out)."""

    field: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False


@dataclass(frozen=True)
class OneOf:
    """The field holds one of these texts (a list field: one of its items does)."""

    field: str
    values: tuple[str, ...]


Test = Between | OneOf


@dataclass(frozen=True)
class FilterClause:
    """What one condition becomes: the passage holds ``present`` (when set), passes one of ``any_of`` (when there
    are any) and none of ``none_of``. ``text_field``: exact only while no passage holds a value there."""

    present: str | None = None
    any_of: tuple[Test, ...] = ()
    none_of: tuple[Test, ...] = ()
    text_field: str | None = None
    condition: str = field(default="", compare=False)


Clause = FilterClause
"""The name the first callers imported (``chroma_filter.py``)."""


class Refused(Exception):
    """A condition no store filter can express exactly; the message names it."""


def clauses(where: Where) -> list[FilterClause]:
    """Every condition of ``where`` as a clause (all must hold); ``Refused`` for one that cannot be one."""
    return [clause(c) for c in where.conditions]


def clause(condition: Condition) -> FilterClause:
    shown = condition_text(condition)
    if condition.field == "date":
        return _date(condition, shown)
    if condition.field == "authority":
        return _numbers(condition, AUTHORITY, AUTHORITY, shown)
    if condition.field == "source":
        if condition.op in _ORDERING:
            raise Refused(f"{shown!r} orders sources as text, which a store filter cannot")
        return _texts(condition, SOURCE, SOURCE, [str(v).casefold() for v in condition.values], shown)
    return _meta(condition, shown)


def _date(condition: Condition, shown: str) -> FilterClause:
    dates = [value for value in condition.values if isinstance(value, datetime.date)]
    if len(dates) != len(condition.values):
        raise Refused(f"{shown!r}: a date value is not a date")
    if condition.op in _ORDERING:
        return FilterClause(present=DATE_DAYS, any_of=(_order(DATE_DAYS, condition.op, dates[0].toordinal()),),
                            condition=shown)
    spans = tuple(Between(DATE_DAYS, date.toordinal(), last_day(date, precision).toordinal())
                  for date, precision in zip(dates, condition.precisions, strict=True))
    if condition.op == "!=":
        return FilterClause(present=DATE_DAYS, none_of=spans[:1], condition=shown)
    return FilterClause(present=DATE_DAYS, any_of=spans, condition=shown)


def _numbers(condition: Condition, name: str, present: str, shown: str) -> FilterClause:
    numbers = [n for value in condition.values if (n := _number(value)) is not None]
    if len(numbers) != len(condition.values):
        raise Refused(f"{shown!r} names an authority tier the store does not know: give a number")
    if condition.op in _ORDERING:
        return FilterClause(present=present, any_of=(_order(name, condition.op, numbers[0]),), condition=shown)
    tests = tuple(Between(name, n, n) for n in numbers)
    if condition.op == "!=":
        return FilterClause(present=present, none_of=tests[:1], condition=shown)
    return FilterClause(present=present, any_of=tests, condition=shown)


def _texts(condition: Condition, name: str, present: str, values: list[str], shown: str) -> FilterClause:
    if condition.op == "!=":
        return FilterClause(present=present, none_of=(OneOf(name, (values[0],)),), condition=shown)
    return FilterClause(present=present, any_of=(OneOf(name, tuple(values)),), condition=shown)


def _meta(condition: Condition, shown: str) -> FilterClause:
    key = condition.field.removeprefix("meta.")
    if not _META_KEY.match(key):
        raise Refused(f"{shown!r}: only meta keys of letters, digits, '_' and '-' are written where a store can "
                      "filter on them")
    numbers, texts, present = meta_field_names(key)
    values = [str(v) for v in condition.values]
    if condition.op in _ORDERING:
        wanted = _number(values[0])
        if wanted is None:
            raise Refused(f"{shown!r} orders text, which a store filter cannot")
        return FilterClause(present=present, any_of=(_order(numbers, condition.op, wanted),), text_field=texts,
                      condition=shown)
    tests = tuple(Between(numbers, n, n) if (n := _number(v)) is not None else OneOf(texts, (v.casefold(),))
                  for v in values)
    if condition.op == "!=":
        return FilterClause(present=present, none_of=tests[:1], condition=shown)
    return FilterClause(present=present, any_of=tests, condition=shown)


def _order(name: str, op: str, value: float) -> Between:
    if op in ("<", "<="):
        return Between(name, high=value, high_open=op == "<")
    return Between(name, low=value, low_open=op == ">")


def meta_field_names(key: str) -> tuple[str, str, str]:
    """The fields of ``meta.KEY``: its numbers, its case-folded texts, and a flag that it holds a value."""
    return f"{META_PREFIX}n_{key}", f"{META_PREFIX}t_{key}", f"{META_PREFIX}has_{key}"


def meta_fields(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The fields ``meta.KEY`` conditions test, for every key of the passage's ``meta`` a field can be named after;
    lists keep their items (a list matches when one of its items does)."""
    meta = metadata.get("meta")
    if not isinstance(meta, dict):
        return {}
    fields: dict[str, Any] = {}
    for key, value in meta.items():
        items = [item for item in (value if isinstance(value, list) else [value]) if item is not None]
        if not isinstance(key, str) or not _META_KEY.match(key) or not items:
            continue
        numbers_field, texts_field, present = meta_field_names(key)
        fields[present] = True
        numbers = [n for item in items if (n := _number(item)) is not None]
        texts = [_folded(item) for item in items if _number(item) is None and isinstance(item, str | bool)]
        if numbers:
            fields[numbers_field] = numbers
        if texts:
            fields[texts_field] = texts
    return fields


def _folded(item: str | bool) -> str:
    """Text as ``Where`` compares it: case-folded, a boolean as the word."""
    if isinstance(item, bool):
        return "true" if item else "false"
    return item.casefold()


def _number(value: Any) -> float | None:
    """A finite number given as one or as text, as ``Where`` reads one (a boolean is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def condition_text(condition: Condition) -> str:
    """The condition as a user would write it (for messages)."""
    values = [v.isoformat() if isinstance(v, datetime.date) else f"{v:g}" if isinstance(v, float) else str(v)
              for v in condition.values]
    shown = f"({', '.join(values)})" if condition.op == "in" else values[0]
    return f"{condition.field} {condition.op} {shown}"
