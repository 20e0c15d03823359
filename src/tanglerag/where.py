"""``--where``: a small language that filters passages by their document's metadata at retrieval.

    date >= 2024-01-01 and source in (example.org, 'Le Monde') and meta.lang = fr

Conditions are joined by ``and``; each is ``FIELD OP VALUE`` or ``FIELD in (VALUE, ...)``. Fields: ``date``,
``source``, ``authority`` and ``meta.KEY``; operators ``= != < <= > >= in``. A value is a bare word (letters, digits
and ``_ . : / + @ -``, so dates, numbers, hosts and tier names need no quotes) or text in single or double quotes.

Why a parser of our own: the text comes from a user (a flag, a setting, an HTTP option), so it is read into typed
conditions, checked field by field, and then applied in Python to each candidate's stored metadata: nothing is
evaluated, and no part of it ever reaches SQL. A document's values are read with the one parser of provenance
(``tanglerag.conflicts``), so a date means the same here as in ingest, citations and the ledger's policies.

How values compare: dates as dates (a year or month stands for its first day, as a document's does; ``=`` and ``in``
compare at the precision given, so ``date = 2024-03`` is any day of March 2024); authority as numbers (a tier name is
mapped by the tiers in force); source as text without regard to case; ``meta.KEY`` as numbers when both sides are
numbers, else as text without regard to case (a list matches when one of its items does). A passage lacking the
field, or whose stored value cannot be read, matches no condition on it, ``!=`` included.

Every path reads a filter here (a flag, a setting, the Python API's ``where=``, an HTTP option), so the bounds are
here: a filter is text of at most ``MAX_WHERE_CHARS`` characters, read in one pass (time linear in its length).
"""

from __future__ import annotations

import datetime
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS, DocumentMeta, Precision, parse_authority, parse_date
from tanglerag.errors import InputError

Op = Literal["=", "!=", "<", "<=", ">", ">=", "in"]
Scalar = datetime.date | float | str
FIELDS = "date, source, authority or meta.KEY"
MAX_WHERE_CHARS = 2000
"""As ``retrieval.where`` takes it: no real filter comes near (a condition is some 20 characters)."""

_TOKEN = re.compile(r"""\s*(?:(?P<op><=|>=|!=|=|<|>)|(?P<mark>[(),])|'(?P<single>[^']*)'|"(?P<double>[^"]*)"|"""
                    r"""(?P<word>[\w.:/+@-]+))""")
_ORDER: dict[str, Callable[[Any, Any], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt,
                                                 ">=": operator.ge}
_META_KEY = re.compile(r"^meta\.(\S+)$")


@dataclass(frozen=True)
class _Token:
    kind: Literal["op", "mark", "text", "word"]
    text: str


@dataclass(frozen=True)
class Condition:
    """One ``FIELD OP VALUE(S)``, its values already typed for the field (``precisions``: the dates')."""

    field: str
    op: Op
    values: tuple[Scalar, ...]
    precisions: tuple[Precision | None, ...]

    def matches(self, metadata: Mapping[str, Any], tiers: Mapping[str, float]) -> bool:
        found = document_value(metadata, self.field, tiers)
        items = [item for item in (found if isinstance(found, list) else [found]) if item is not None]
        if not items:
            return False
        if self.op == "!=":
            return not any(self._equal(item, 0) for item in items)
        if self.op in ("=", "in"):
            return any(self._equal(item, i) for item in items for i in range(len(self.values)))
        pairs = [_comparable(item, self.values[0]) for item in items]
        return any(left is not None and _ORDER[self.op](left, right) for left, right in pairs)

    def _equal(self, value: Any, i: int) -> bool:
        wanted = self.values[i]
        if isinstance(wanted, datetime.date) and isinstance(value, datetime.date):
            return _same_date(value, wanted, self.precisions[i])
        left, right = _comparable(value, wanted)
        return left is not None and left == right


@dataclass(frozen=True)
class Where:
    """A parsed ``--where``: every condition must hold. ``text`` is what the user wrote (shown back in errors)."""

    text: str
    conditions: tuple[Condition, ...]
    tiers: Mapping[str, float]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        return all(condition.matches(metadata, self.tiers) for condition in self.conditions)


def parse_where(text: str, tiers: Mapping[str, float] | None = DEFAULT_AUTHORITY_TIERS) -> Where | None:
    """``text`` as a typed filter (None when it is blank: no filter). InputError names what cannot be read.

    ``tiers`` map the authority tier names a condition may give. None checks all the rest and lets any tier name
    pass: settings are validated before the tiers in force are known; match only with a where parsed with them."""
    if not isinstance(text, str):
        raise InputError(f"where must be text (a filter such as \"date >= 2024\"), got {type(text).__name__}")
    if len(text) > MAX_WHERE_CHARS:
        raise InputError(f"where is {len(text):,} characters: at most {MAX_WHERE_CHARS:,} are read")
    if not text.strip():
        return None
    conditions = _Parser(_tokens(text), text, tiers).conditions()
    return Where(text=text, conditions=tuple(conditions), tiers=dict(tiers or {}))


def _tokens(text: str) -> list[_Token]:
    """The tokens in one pass (testing ``text[at:]`` for what is left copied the rest at each token: quadratic)."""
    tokens, at, end = [], 0, len(text.rstrip())
    while at < end:
        found = _TOKEN.match(text, at)
        if found is None:
            start = len(text) - len(text[at:].lstrip())
            raise InputError(f"where {text.strip()!r}: cannot read {text[start:start + 20]!r} (character "
                             f"{start + 1}); quote text that holds spaces or punctuation")
        kind = found.lastgroup
        shown: Literal["op", "mark", "text", "word"] = (
            "op" if kind == "op" else "mark" if kind == "mark" else "word" if kind == "word" else "text")
        tokens.append(_Token(shown, found[kind or "word"]))
        at = found.end()
    return tokens


class _Parser:
    """Reads ``condition (and condition)*`` from the tokens, one token at a time."""

    def __init__(self, tokens: list[_Token], text: str, tiers: Mapping[str, float] | None) -> None:
        self.tokens, self.text, self.tiers, self.at = tokens, text, tiers, 0

    def conditions(self) -> list[Condition]:
        found = [self._condition()]
        while self._peek() is not None:
            joiner = self._next("'and' between conditions")
            if joiner.kind != "word" or joiner.text.lower() != "and":
                raise self._error(f"expected 'and' between conditions, got {joiner.text!r}")
            found.append(self._condition())
        return found

    def _condition(self) -> Condition:
        name = self._next(f"a field ({FIELDS})")
        field = name.text if name.kind == "word" else ""
        if field not in ("date", "source", "authority") and not _META_KEY.match(field):
            raise self._error(f"unknown field {name.text!r}: filter on {FIELDS}")
        op = self._operator(field)
        raw = self._list() if op == "in" else [self._value(field)]
        try:
            typed = [_typed(field, value, self.tiers) for value in raw]
        except ValueError as exc:
            raise self._error(str(exc)) from None
        return Condition(field, op, tuple(v for v, _ in typed), tuple(p for _, p in typed))

    def _operator(self, field: str) -> Op:
        token = self._next(f"an operator after {field!r}")
        if token.kind == "op" or (token.kind == "word" and token.text.lower() == "in"):
            return token.text.lower()  # type: ignore[return-value]  # one of Op, as the two kinds say
        raise self._error(f"expected an operator (= != < <= > >= in) after {field!r}, got {token.text!r}")

    def _list(self) -> list[str]:
        if self._next("'(' after 'in'").text != "(":
            raise self._error("'in' takes a list in parentheses: source in (a.org, b.org)")
        values = [self._value("in")]
        while (mark := self._next("',' or ')' in the list")).text == ",":
            values.append(self._value("in"))
        if mark.text != ")":
            raise self._error(f"expected ',' or ')' in the list, got {mark.text!r}")
        return values

    def _value(self, after: str) -> str:
        token = self._next(f"a value after {after!r}")
        if token.kind not in ("word", "text"):
            raise self._error(f"expected a value after {after!r}, got {token.text!r}")
        return token.text

    def _peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _next(self, wanted: str) -> _Token:
        token = self._peek()
        if token is None:
            raise self._error(f"ends where {wanted} was expected")
        self.at += 1
        return token

    def _error(self, reason: str) -> InputError:
        return InputError(f"where {self.text.strip()!r}: {reason}")


def _typed(field: str, value: str, tiers: Mapping[str, float] | None) -> tuple[Scalar, Precision | None]:
    """A condition's value as the field compares it; ValueError says why it cannot be one."""
    if field == "date":
        try:
            date, precision = parse_date(value)
        except InputError:
            date, precision = None, None
        if date is None:
            raise ValueError(f"date value {value!r} cannot be read: give an ISO date (YYYY-MM-DD), a month (YYYY-MM) "
                             "or a year")
        return date, precision
    if field == "authority":
        return _authority(value, tiers), None
    return value, None


def _authority(value: str, tiers: Mapping[str, float] | None) -> float | str:
    """A number, or a tier name mapped by ``tiers`` (kept as a name when they are not known yet)."""
    number = _number(value)
    if number is not None:
        return number
    if value.strip() and tiers is None:
        return value
    try:
        mapped = parse_authority(value, tiers or {})
    except InputError:
        mapped = None
    if mapped is None:
        known = ", ".join(sorted(tiers or {})) or "none"
        raise ValueError(f"authority value {value!r} cannot be read: give a number or a tier ({known})")
    return mapped


def document_value(metadata: Mapping[str, Any], field: str, tiers: Mapping[str, float]) -> Any:
    """The value of ``field`` (``date``, ``source``, ``authority`` or ``meta.KEY``) in a passage's metadata, read
    as the conflicts module reads provenance; None when it is missing or cannot be read."""
    try:
        if field == "date":
            return parse_date(metadata.get("date"))[0]
        if field == "authority":
            return parse_authority(metadata.get("authority"), tiers)
        if field == "source":
            return DocumentMeta.from_metadata({"source": metadata.get("source")}).source
        key = field.removeprefix("meta.")
        return DocumentMeta.from_metadata({"meta": metadata.get("meta")}).meta.get(key)
    except InputError:
        return None


def date_text(metadata: Mapping[str, Any]) -> str | None:
    """A document's date as a citation shows it, as precisely as it was given (``2024``, ``2024-05`` or
    ``2024-05-03``); None when it has none or it cannot be read."""
    try:
        date, precision = parse_date(metadata.get("date"))
    except InputError:
        return None
    if date is None:
        return None
    return {"year": f"{date.year:04d}", "month": date.isoformat()[:7]}.get(precision or "day", date.isoformat())


def authority_tiers(settings: BaseModel) -> dict[str, float]:
    """The named authority tiers in force: those of the settings section that declares ``authority_tiers`` (the
    ledger family's), else the defaults. Read generically so that ingest and retrieval, below the families, map a
    tier name the way the ledger does, without importing it."""
    for name in type(settings).model_fields:
        tiers = getattr(getattr(settings, name), "authority_tiers", None)
        if isinstance(tiers, dict):
            return {str(key): float(value) for key, value in tiers.items()}
    return dict(DEFAULT_AUTHORITY_TIERS)


def _number(value: Any) -> float | None:
    """A finite number given as one or as text; None otherwise (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _comparable(value: Any, wanted: Scalar) -> tuple[Any, Any]:
    """Two values in one type to compare: dates, numbers (when both sides are), or casefolded text; (None, None)
    when they have none in common."""
    if isinstance(wanted, datetime.date):
        return (value, wanted) if isinstance(value, datetime.date) else (None, None)
    left, right = _number(value), _number(wanted)
    if left is not None and right is not None:
        return left, right
    if isinstance(wanted, float) or isinstance(value, dict | list):
        return None, None
    shown = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return shown.casefold(), wanted.casefold()


def _same_date(value: datetime.date, wanted: datetime.date, precision: Precision | None) -> bool:
    if precision == "year":
        return value.year == wanted.year
    if precision == "month":
        return (value.year, value.month) == (wanted.year, wanted.month)
    return value == wanted
