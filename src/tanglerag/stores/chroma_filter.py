"""A ``--where`` as Chroma's ``where`` dict, built from the typed clauses of ``pushdown`` (never from user text).

Chroma compares stored metadata values: ``$eq $ne $gt $gte $lt $lte $in $nin`` on a scalar (the orderings on numbers
only), ``$contains`` / ``$not_contains`` on a list (one item, of the same type), joined by ``$and`` / ``$or``. Three
gaps decide what a record keeps beside ``pushdown``'s fields and how a clause is asked:

* a negation (``$ne``, ``$nin``, ``$not_contains``) also passes a record without the field, where a passage lacking
  the field must pass no condition on it; and no operator asks whether a field is there at all. So each record lists
  the filter fields it holds (``PRESENT``), and a clause asks for its field there first.
* an ordering never looks inside a list: a ``meta.KEY`` that holds numbers also keeps their least and greatest
  (``meta_bounds``), so "some item < x" is "the least < x".
* an item in a list matches only its own type: ``meta.KEY``'s numbers are written and asked as floats.

A source asked for by a number is refused: ``Where`` compares two numbers as numbers ("123" is "123.0"), while
Chroma compares the source's text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tanglerag.stores.base import SOURCE
from tanglerag.stores.pushdown import META_PREFIX, Between, FilterClause, OneOf, Refused, Test

PRESENT = "_tr_present"
"""The list of the filter fields a record holds (``$contains`` tells whether it has one)."""
_NUMBERS, _TEXTS = f"{META_PREFIX}n_", f"{META_PREFIX}t_"
_LEAST, _GREATEST = f"{META_PREFIX}min_", f"{META_PREFIX}max_"


def chroma_where(found: list[FilterClause]) -> dict[str, Any]:
    """Every clause (all must hold) as one Chroma ``where``; ``Refused`` for a test Chroma cannot ask."""
    return _every([_clause(clause) for clause in found])


def chroma_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A record's filter fields (``base.filter_fields`` and ``pushdown.meta_fields``) with what Chroma needs beside
    them: the bounds of each ``meta.KEY``'s numbers, and the list of the fields held (``PRESENT``)."""
    written = {**fields, **meta_bounds(fields)}
    return {**written, PRESENT: sorted(written)} if written else {}


def meta_bounds(fields: Mapping[str, Any]) -> dict[str, float]:
    """The least and greatest number of each ``meta.KEY`` list of numbers."""
    bounds: dict[str, float] = {}
    for name, numbers in fields.items():
        if name.startswith(_NUMBERS):
            key = name.removeprefix(_NUMBERS)
            bounds[_LEAST + key], bounds[_GREATEST + key] = min(numbers), max(numbers)
    return bounds


def _clause(clause: FilterClause) -> dict[str, Any]:
    if any(isinstance(test, OneOf) and test.field == SOURCE and any(map(_reads_as_number, test.values))
           for test in (*clause.any_of, *clause.none_of)):
        raise Refused(f"{clause.condition!r} compares a source with a number, which a Chroma filter cannot")
    parts: list[dict[str, Any]] = []
    if clause.present is not None:
        parts.append({PRESENT: {"$contains": clause.present}})
    if clause.any_of:
        parts.append(_either([_test(test) for test in clause.any_of]))
    parts.extend(_negated(test) for test in clause.none_of)
    if not parts:
        raise Refused(f"{clause.condition!r} names no field to test")
    return _every(parts)


def _test(test: Test) -> dict[str, Any]:
    if isinstance(test, OneOf):
        if _listed(test.field):
            return _either([{test.field: {"$contains": value}} for value in test.values])
        values = list(test.values)
        return {test.field: {"$eq": values[0]} if len(values) == 1 else {"$in": values}}
    if _listed(test.field):
        return _list_holds(test)
    if _single(test):
        return {test.field: {"$eq": test.low}}
    return _every(_bounds(test.field, test))


def _negated(test: Test) -> dict[str, Any]:
    if isinstance(test, OneOf):
        if _listed(test.field):
            return _every([{test.field: {"$not_contains": value}} for value in test.values])
        values = list(test.values)
        return {test.field: {"$ne": values[0]} if len(values) == 1 else {"$nin": values}}
    if _single(test):
        return {test.field: {"$not_contains" if _listed(test.field) else "$ne": test.low}}
    if _listed(test.field):
        raise Refused(f"a range on the list field {test.field} cannot be negated in a Chroma filter")
    outside = []
    if test.low is not None:
        outside.append({test.field: {"$lte" if test.low_open else "$lt": test.low}})
    if test.high is not None:
        outside.append({test.field: {"$gte" if test.high_open else "$gt": test.high}})
    return _either(outside)


def _list_holds(test: Between) -> dict[str, Any]:
    """Some number of a ``meta.KEY`` list passes ``test``: one equal to it, or the least below / greatest above."""
    if _single(test):
        return {test.field: {"$contains": test.low}}
    key = test.field.removeprefix(_NUMBERS)
    if test.low is None:
        return _every(_bounds(_LEAST + key, test))
    if test.high is None:
        return _every(_bounds(_GREATEST + key, test))
    raise Refused(f"a range with two bounds on the list field {test.field} cannot be a Chroma filter")


def _bounds(name: str, test: Between) -> list[dict[str, Any]]:
    parts = []
    if test.low is not None:
        parts.append({name: {"$gt" if test.low_open else "$gte": test.low}})
    if test.high is not None:
        parts.append({name: {"$lt" if test.high_open else "$lte": test.high}})
    return parts


def _single(test: Between) -> bool:
    """The range holds one value: an equality."""
    return test.low is not None and test.low == test.high and not (test.low_open or test.high_open)


def _reads_as_number(text: str) -> bool:
    """As ``Where`` reads a value: a finite number (``float`` takes "1e1", " 4 ", "1_000")."""
    try:
        return math.isfinite(float(text))
    except (ValueError, OverflowError):
        return False


def _listed(name: str) -> bool:
    return name.startswith((_NUMBERS, _TEXTS))


def _every(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {"$and": parts}


def _either(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {"$or": parts}
