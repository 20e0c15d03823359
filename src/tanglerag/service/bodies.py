"""Request bodies that are JSON but not text: a lone surrogate (``"\\ud800"``) is refused before any route sees it.

JSON may escape any UTF-16 code unit, so ``"\\ud800"`` is valid JSON; Python reads it into a ``str`` that cannot be
encoded, and every later step (a validation message, SQLite, the embedder, the reply) fails on it with a 500. One
check at the door answers 400 naming the field instead, in the error shape of the route asked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tanglerag.service.asgi import replaying
from tanglerag.service.errors import error_body

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""Cheap to look for in the raw bytes: only a body holding one is parsed here (a pair, an escaped emoji, is fine)."""


class UnicodeBodies:
    """400 for a JSON or JSONL body holding a lone surrogate; other bodies pass untouched (multipart uploads are
    checked by the index routes, which read their files)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_multipart(scope):
            await self.app(scope, receive, send)
            return
        body = await _whole_body(receive)
        where = lone_surrogate_in(body) if _SURROGATE_ESCAPE.search(body) else None
        if where is not None:
            message = f"{where}: not valid Unicode text (a lone surrogate such as \\ud800); send UTF-8 text"
            await JSONResponse(error_body(scope["path"], message, 400, param=where),
                               status_code=400)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def lone_surrogate_in(body: bytes) -> str | None:
    """Where the body holds a lone surrogate: a field's dotted path (``messages.0.content``), prefixed by its line
    (``line 2: text``) in a JSONL body; None when it holds none or is not JSON (the route says what is wrong)."""
    try:
        return first_unencodable(json.loads(body))
    except (ValueError, RecursionError):
        pass
    for number, line in enumerate(body.splitlines(), start=1):
        if _SURROGATE_ESCAPE.search(line):
            try:
                where = first_unencodable(json.loads(line))
            except (ValueError, RecursionError):
                continue
            if where is not None:
                return f"line {number}: {where}"
    return None


def first_unencodable(document: Any) -> str | None:
    """The dotted path of the first string (or key) that is not valid Unicode; walked without recursion, so a
    deeply nested body cannot overflow the stack here."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str) and not _encodable(value):
            return where or "body"
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in reversed(list(items)):
            name = shown(str(key))
            inner = f"{where}.{name}" if where else name
            if name != str(key):
                return f"{inner} (a key)"
            pending.append((inner, item))
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
