"""Plain text and Markdown files. Markdown keeps its structure: its YAML front matter is the document's metadata,
its headings (ATX ``#``, setext ``===``/``---``) cut it into sections, each piece carrying its heading path, and its
first level-1 heading is the title when the front matter gives none."""

from __future__ import annotations

import re

from tanglerag.loaders.base import Loaded, Segment, decoded
from tanglerag.loaders.front_matter import split_front_matter

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def load_text(name: str, data: bytes) -> Loaded:
    """The whole file as one piece (a legacy encoding recorded as ``encoding``)."""
    text, encoding = decoded(name, data)
    return Loaded(segments=[Segment(text=text)], detected=_encoding(encoding))


def load_markdown(name: str, data: bytes) -> Loaded:
    """Front matter as the document's fields, then one piece per heading (its text as written, heading line
    first)."""
    text, encoding = decoded(name, data)
    body, fields = split_front_matter(text, name)
    segments, first_h1 = markdown_sections(body)
    if len(segments) == 1 and not segments[0].section:  # no headings: the text as written
        segments = [Segment(text=body)]
    return Loaded(segments=segments, title=first_h1, explicit=fields, detected=_encoding(encoding))


def _encoding(encoding: str | None) -> dict[str, str]:
    return {"encoding": encoding} if encoding else {}


def markdown_sections(text: str) -> tuple[list[Segment], str | None]:
    """``text`` cut at its headings (outside fenced code): each piece with the path of headings it stands under;
    the first level-1 heading's text. Pieces without words are left out."""
    segments: list[Segment] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    first_h1: str | None = None
    fenced = False

    def close() -> None:
        if "".join(lines).strip():
            segments.append(Segment(text="\n".join(lines).strip("\n"), section=[h for _, h in path]))
        lines.clear()

    def open_(level: int, heading: str, *written: str) -> None:
        nonlocal first_h1
        close()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, heading))
        lines.extend(written)
        if level == 1 and first_h1 is None:
            first_h1 = heading

    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        atx = None if fenced else _ATX.match(line)
        setext = None if fenced or not lines or not lines[-1].strip() else _SETEXT.match(line)
        if atx and atx[2]:
            open_(len(atx[1]), atx[2], line)
        elif setext and not _is_heading_line(lines, path):
            above = lines.pop()
            open_(1 if setext[1][0] == "=" else 2, above.strip(), above, line)
        else:
            lines.append(line)
    close()
    return segments, first_h1


def _is_heading_line(lines: list[str], path: list[tuple[int, str]]) -> bool:
    """Whether the last line gathered is the heading just opened (a rule under a heading is not a second one)."""
    return len(lines) == 1 and bool(path) and _ATX.match(lines[0]) is not None
