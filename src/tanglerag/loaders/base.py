"""What a loader gives back: a file's text in the pieces its structure draws (pages, sections), and what the file
says about itself (title, date, author, address).

Why pieces and not one text: a citation must say where an answer stands ("p. 12, §Scope"), so each chunk carries the
page(s) and heading path of the pieces it is cut from (``loaders.chunking``).
"""

from __future__ import annotations

from collections.abc import Callable

import charset_normalizer
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


LEGACY_ENCODINGS = ("cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "koi8_r",
                    "cp874", "shift_jis", "euc_jp", "gb18030", "big5", "euc_kr")
"""The encodings a text file that is not UTF-8 is tried in: what older editors and systems save. Left to choose
among all it knows, charset-normalizer reads a short French line ("caf\\xe9 au lait") as Urdu code page 1006."""


def decoded(name: str, data: bytes) -> tuple[str, str | None]:
    """A text file's bytes as text, and the legacy encoding it was read in (None: UTF-8, a BOM dropped). Not UTF-8:
    charset-normalizer's guess (Latin-1, Windows-1252, ...: files saved by older editors and tools are common), or
    refused naming the first bad byte when nothing reads it as text."""
    if looks_binary(data):
        raise UnreadableFile(f"{name}: looks binary, not text")
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        guess = charset_normalizer.from_bytes(data, cp_isolation=list(LEGACY_ENCODINGS)).best()
        if guess is None or guess.encoding in ("utf_8", "utf-8"):
            raise UnreadableFile(f"{name}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}) and no "
                                 "other encoding reads it; save it as UTF-8") from exc
        return str(guess), guess.encoding
