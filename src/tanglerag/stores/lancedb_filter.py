"""A ``--where`` as a LanceDB SQL predicate, built from the typed conditions and never from the user's text.

LanceDB filters rows with a SQL predicate (DataFusion underneath). The predicate is assembled here from a parsed
``Where``: column names are our own constants, and every value is a literal written by ``sql_text`` (a string in
single quotes, a quote doubled: the only escape LanceDB's SQL knows, a backslash being an ordinary character) or
``sql_number`` (a finite float's ``repr``). Nothing a user typed reaches the predicate but as such a literal.

Each condition passes exactly the passages ``Where.matches`` passes, on values written beside each passage:

* date, source, authority: the filter fields of ``base.filter_fields`` (a date's first day as a day number, the
  source case-folded by ``LanceDBStore``, the authority as a number). ``date = 2024-03`` is a first day within March 2024 (the last day
  from ``base.last_day``), ``<`` and the rest compare that first day, as ``where._same_date`` and ``_comparable`` do.
* ``meta.KEY``: ``Where`` compares each value under the key (each item of a list) as a number when both sides read
  as numbers and else as case-folded text, numbers as ``str`` writes them. ``meta_terms`` writes, per key, one term
  for the key's presence and one for each value's number, text and non-number text (``_term``), so ``=``, ``in``
  and ``!=`` become ``array_has`` on a list of strings (byte-exact); ``meta_bounds`` writes, per key, the least and
  greatest number, text and non-number text, so ``<`` and the rest compare an extreme (a value above 3 exists when
  the greatest is). Texts are kept as the hex of their UTF-8 bytes: byte order is code point order, as Python
  orders strings, and hex needs no JSON escape, so LanceDB compares the extracted JSON strings as Python would.

What cannot be told exactly is refused (``Unsupported``, the condition named): a source compared with a number
(``Where`` would compare numbers as numbers), an authority tier name unknown when the filter was read.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping
from typing import Any

from tanglerag.stores.base import AUTHORITY, DATE_DAYS, SOURCE, last_day
from tanglerag.where import Condition, Where
from tanglerag.where import _number as where_number  # the one reading of "a number" that Where compares by

META_TERMS = "_tr_meta_terms"
"""List of strings: the ``meta.KEY`` terms ``=``, ``in`` and ``!=`` test (``meta_terms``)."""
META_BOUNDS = "_tr_meta_bounds"
"""JSON: per ``meta`` key, the extremes ``<``, ``<=``, ``>``, ``>=`` compare (``meta_bounds``)."""
_ORDERING = ("<", "<=", ">", ">=")


class Unsupported(Exception):
    """A condition LanceDB's SQL cannot express exactly; the message names it."""


def sql_text(value: str) -> str:
    """``value`` as a SQL string literal: in single quotes, each quote doubled (a backslash is literal)."""
    return "'" + value.replace("'", "''") + "'"


def sql_number(value: float) -> str:
    """A finite number as a SQL literal (``repr`` round-trips a float; no text of the user's survives)."""
    number = float(value)
    if not math.isfinite(number):
        raise Unsupported(f"{value!r} is not a finite number")
    return repr(number)


def predicate(where: Where) -> str:
    """The SQL predicate every condition of ``where`` holds in (joined by AND); ``Unsupported`` names one that has
    none."""
    return " AND ".join(f"({_condition(condition)})" for condition in where.conditions)


def _condition(condition: Condition) -> str:
    if condition.field == "date":
        return _date(condition)
    if condition.field == "authority":
        return _authority(condition)
    if condition.field == "source":
        return _source(condition)
    return _meta(condition, condition.field.removeprefix("meta."))


def _date(condition: Condition) -> str:
    firsts = [_day(value, condition) for value in condition.values]
    if condition.op in _ORDERING:
        return f"{DATE_DAYS} {condition.op} {firsts[0]}"
    spans = [f"({DATE_DAYS} >= {first} AND {DATE_DAYS} <= {last_day(value, precision).toordinal()})"  # type: ignore[arg-type]
             for first, value, precision in zip(firsts, condition.values, condition.precisions, strict=True)]
    return _equality(condition.op, DATE_DAYS, spans)


def _day(value: Any, condition: Condition) -> int:
    if not isinstance(value, datetime.date):
        raise Unsupported(f"{shown(condition)!r}: {value!r} is not a date")
    return value.toordinal()


def _authority(condition: Condition) -> str:
    if any(isinstance(value, str) for value in condition.values):
        raise Unsupported(f"{shown(condition)!r} names an authority tier unknown when the filter was read: give a "
                          "number")
    numbers = [sql_number(value) for value in condition.values]  # type: ignore[arg-type]
    if condition.op in _ORDERING:
        return f"{AUTHORITY} {condition.op} {numbers[0]}"
    return _equality(condition.op, AUTHORITY, [f"{AUTHORITY} = {number}" for number in numbers])


def _source(condition: Condition) -> str:
    texts = []
    for value in condition.values:
        text = str(value)
        if where_number(text) is not None:
            raise Unsupported(f"{shown(condition)!r} compares a source with a number, which Where compares as a "
                              "number and LanceDB's filter as text")
        texts.append(sql_text(text.casefold()))
    if condition.op in _ORDERING:
        return f"{SOURCE} {condition.op} {texts[0]}"
    return _equality(condition.op, SOURCE, [f"{SOURCE} = {text}" for text in texts])


def _equality(op: str, column: str, tests: list[str]) -> str:
    """``=`` / ``in``: one of ``tests`` holds; ``!=``: the field is present and the first test fails."""
    if op == "!=":
        return f"{column} IS NOT NULL AND NOT {tests[0]}"
    return " OR ".join(tests)


def _meta(condition: Condition, key: str) -> str:
    values = [str(value) for value in condition.values]
    if condition.op in _ORDERING:
        return _meta_order(key, condition.op, values[0])
    tests = [_meta_equal(key, value) for value in values]
    if condition.op == "!=":
        return f"array_has({META_TERMS}, {sql_text(_term(key, 'p'))}) AND NOT ({tests[0]})"
    return " OR ".join(f"({test})" for test in tests)


def _meta_equal(key: str, value: str) -> str:
    """A value under ``key`` equals ``value``: as a number when ``value`` reads as one (a value that does not is
    compared as text), else any value as text."""
    number = where_number(value)
    if number is None:
        return f"array_has({META_TERMS}, {sql_text(_term(key, 't', value.casefold()))})"
    return (f"array_has({META_TERMS}, {sql_text(_term(key, 'n', _number_text(number)))}) OR "
            f"array_has({META_TERMS}, {sql_text(_term(key, 'x', value.casefold()))})")


def _meta_order(key: str, op: str, value: str) -> str:
    """Some value under ``key`` compares ``op`` with ``value``: the greatest one (``>``, ``>=``) or the least."""
    end = 1 if op in (">", ">=") else 0
    folded = sql_text(json.dumps(_hex(value.casefold())))
    number = where_number(value)
    if number is None:
        return f"{_bound(key, 't', end)} {op} {folded}"
    return f"CAST({_bound(key, 'n', end)} AS DOUBLE) {op} {sql_number(number)} OR {_bound(key, 'x', end)} {op} {folded}"


def _bound(key: str, kind: str, end: int) -> str:
    path = f"$[{json.dumps(key)}].{kind}[{end}]"
    return f"json_extract({META_BOUNDS}, {sql_text(path)})"


def meta_terms(metadata: Mapping[str, Any]) -> list[str]:
    """The terms ``meta.KEY = / in / !=`` test for a passage: per key holding a value, ``p`` (present), and per
    scalar value ``t`` (its text), and ``n`` (its number) or ``x`` (its text, when it is no number)."""
    terms: list[str] = []
    for key, values in _meta_values(metadata).items():
        terms.append(_term(key, "p"))
        for text, number in values:
            terms.append(_term(key, "t", text))
            terms.append(_term(key, "x", text) if number is None else _term(key, "n", _number_text(number)))
    return sorted(set(terms))


def meta_bounds(metadata: Mapping[str, Any]) -> dict[str, dict[str, list[Any]]]:
    """Per ``meta`` key, the least and greatest of its numbers (``n``), texts (``t``, hex) and texts that are no
    number (``x``, hex); a kind without values is left out."""
    bounds: dict[str, dict[str, list[Any]]] = {}
    for key, values in _meta_values(metadata).items():
        kinds: dict[str, list[Any]] = {"n": [number for _, number in values if number is not None],
                 "t": [_hex(text) for text, _ in values],
                 "x": [_hex(text) for text, number in values if number is None]}
        found = {kind: [min(items), max(items)] for kind, items in kinds.items() if items}
        if found:
            bounds[key] = found
    return bounds


def _meta_values(metadata: Mapping[str, Any]) -> dict[str, list[tuple[str, float | None]]]:
    """Per key of the passage's ``meta`` holding a value: each scalar value as (case-folded text, number or None),
    as ``Where`` reads it (a boolean is the word ``true`` / ``false``; a list's items are its values; an object
    or nested list is present but equals nothing)."""
    meta = metadata.get("meta") or {}
    if not isinstance(meta, dict):
        return {}
    found: dict[str, list[tuple[str, float | None]]] = {}
    for key, value in meta.items():
        items = [item for item in (value if isinstance(value, list) else [value]) if item is not None]
        if items and isinstance(key, str):
            found[key] = [(_text(item).casefold(), where_number(item)) for item in items
                               if not isinstance(item, dict | list)]
    return found


def _text(item: Any) -> str:
    return ("true" if item else "false") if isinstance(item, bool) else str(item)


def _term(key: str, kind: str, value: str = "") -> str:
    """One term: JSON of (key, kind, value), so no key or value can run into another."""
    return json.dumps([key, kind, value])


def _number_text(number: float) -> str:
    """A number's one spelling (``-0.0`` is ``0.0``, as they compare equal)."""
    return repr(number + 0.0)


def _hex(text: str) -> str:
    """Hex of the UTF-8 bytes (lone surrogates kept): ordered as the text is, and free of JSON escapes."""
    return text.encode("utf-8", "surrogatepass").hex()


def shown(condition: Condition) -> str:
    """The condition as a user would write it (for messages)."""
    values = [value.isoformat() if isinstance(value, datetime.date) else f"{value:g}" if isinstance(value, float)
              else str(value) for value in condition.values]
    listed = f"({', '.join(values)})" if condition.op == "in" else values[0]
    return f"{condition.field} {condition.op} {listed}"
