"""What a loader gives back: a file's text in the pieces its structure draws (pages, sections), and what the file
says about itself (title, date, author, address).

Why pieces and not one text: a citation must say where an answer stands ("p. 12, §Scope"), so each chunk carries the
page(s) and heading path of the pieces it is cut from (``loaders.chunking``).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from tanglerag.errors import IngestError
from tanglerag.registry import Registry


class Segment(BaseModel):
    """A piece of a file's text with one place: a page, or the body under one heading path."""

    text: str
    page: int | None = None
    section: list[str] = Field(default_factory=list)


class Loaded(BaseModel):
    """A file as a loader read it. ``detected`` holds metadata found in the file itself (``date`` as ISO text,
    ``source``, ``author``, ``url``); values a person gave (front matter, JSONL) win over these."""

    segments: list[Segment]
    title: str | None = None
    detected: dict[str, str] = Field(default_factory=dict)
    explicit: dict[str, object] = Field(default_factory=dict, description="front matter fields, as written")

    def text(self) -> str:
        return "\n\n".join(s.text for s in self.segments)


class UnreadableFile(IngestError):
    """A file whose type is supported but whose bytes cannot be read as text of that type (encrypted, corrupt, no
    text layer, another format under the extension); a folder skips it with a warning, an upload is refused."""


Loader = Callable[[str, bytes], Loaded]
"""Reads a file's bytes (``name`` for messages) into a ``Loaded``; raises ``UnreadableFile`` or ``IngestError``."""

LOADERS: Registry[Loader] = Registry("file type", group="tanglerag.loaders")
"""Loaders by lower-case file extension without the dot (``pdf``, ``md``); a plug-in may add one."""


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def decoded(name: str, data: bytes) -> str:
    """A text file's bytes as text: UTF-8 (a BOM dropped), else refused naming the first bad byte."""
    if looks_binary(data):
        raise UnreadableFile(f"{name}: looks binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"{name}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); save it "
                             "as UTF-8") from exc
