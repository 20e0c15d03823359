"""Request bodies that Python's JSON parser reads but no JSON reader should: refused at the door, naming the field.

JSON may escape any UTF-16 code unit, so ``"\\ud800"`` is valid JSON; Python reads it into a ``str`` that cannot be
encoded, and every later step (a validation message, SQLite, the embedder, the reply) fails on it with a 500.
Python also reads ``NaN``, ``Infinity`` and ``1e400`` (no JSON numbers) as floats that no reply can carry back (a
validation error quoting one was a 500), and an integer of more than 4,300 digits only as Python's advice to call
``sys.set_int_max_str_digits()``. One check at the door answers 400 naming the field instead, in the error shape of
the route asked.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tanglerag.service.asgi import replaying
from tanglerag.service.errors import error_body

NOT_TEXT = "not valid Unicode text (a lone surrogate such as \\ud800); send UTF-8 text"
NOT_FINITE = "not a finite number (NaN, Infinity and numbers past 1.8e308 are not JSON numbers)"
_DIGITS = sys.get_int_max_str_digits() or 10**9  # 0: no limit in this interpreter
_SUSPECT = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|NaN|Infinity|[eE][+]?\d{3}|\d{309}")  # 1e308: float's end
"""Cheap to look for in the raw bytes: only a body holding one is parsed here (a pair, an escaped emoji, "NaN" in a
string, is fine once parsed)."""


@dataclass(frozen=True)
class _LongInteger:
    """Stands where the body holds an integer too long for ``int()``, so the walk can say where it is."""

    digits: int


def _integer(text: str) -> int | _LongInteger:
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if digits > _DIGITS else int(text)


class JsonBodies:
    """400 for a JSON or JSONL body holding a lone surrogate, a non-finite number or an integer too long to read;
    other bodies pass untouched (multipart uploads are checked by the index routes, which read their files)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_multipart(scope):
            await self.app(scope, receive, send)
            return
        body = await _whole_body(receive)
        refused = refusal_in(body) if _SUSPECT.search(body) else None
        if refused is not None:
            where, why = refused
            await JSONResponse(error_body(scope["path"], f"{where}: {why}", 400, param=where),
                               status_code=400)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def refusal_in(body: bytes) -> tuple[str, str] | None:
    """Where the body holds what is refused and why: a field's dotted path (``messages.0.content``), prefixed by its
    line (``line 2: text``) in a JSONL body; None when it holds nothing refused or is not JSON (the route says what
    is wrong)."""
    try:
        return first_refused(json.loads(body, parse_int=_integer))
    except (ValueError, RecursionError):
        pass
    for number, line in enumerate(body.splitlines(), start=1):
        if _SUSPECT.search(line):
            try:
                refused = first_refused(json.loads(line, parse_int=_integer))
            except (ValueError, RecursionError):
                continue
            if refused is not None:
                return f"line {number}: {refused[0]}", refused[1]
    return None


def first_refused(document: Any) -> tuple[str, str] | None:
    """The dotted path of the first value (or key) that is refused, and why: a string that is not valid Unicode, a
    float that is not finite, an integer too long to read. Walked without recursion, so a deeply nested body cannot
    overflow the stack here."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        where, value = pending.pop()
        why = _why_refused(value)
        if why is not None:
            return where or "body", why
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in reversed(list(items)):
            name = shown(str(key))
            inner = f"{where}.{name}" if where else name
            if name != str(key):
                return f"{inner} (a key)", NOT_TEXT
            pending.append((inner, item))
    return None


def _why_refused(value: Any) -> str | None:
    if isinstance(value, str) and not _encodable(value):
        return NOT_TEXT
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_FINITE
    if isinstance(value, _LongInteger):
        return f"an integer of {value.digits} digits, too long to read (at most {_DIGITS})"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(name: str) -> str:
    """A name fit for a message: a surrogate in it is written as its escape."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _is_multipart(scope: Scope) -> bool:
    kind = dict(scope["headers"]).get(b"content-type", b"")
    return bool(kind.split(b";")[0].strip().lower().startswith(b"multipart/"))


async def _whole_body(receive: Receive) -> bytes:
    """The request's body, every chunk (``BodyLimit``, outside this, has bounded its size)."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)
