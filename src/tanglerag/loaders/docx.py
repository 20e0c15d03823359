"""Word files (.docx), with python-docx: paragraphs and table cells in document order, cut into sections at the
paragraphs styled as headings (``Heading 1``..``Heading 9``, ``Title``), with the title, author and dates of the
file's core properties. Word keeps no pages in the file (its layout decides them), so a .docx has sections only."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from tanglerag.loaders.base import LOADERS, Loaded, Segment, UnreadableFile

_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.I)


@LOADERS.add("docx")
def load_docx(name: str, data: bytes) -> Loaded:
    """The document's text in sections; a file that is not a Word document, or holds no text, is refused."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    if not data.startswith(b"PK"):
        raise UnreadableFile(f"{name}: not a Word .docx file (not a zip package; an old .doc? save it as .docx)")
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document))
        properties = document.core_properties
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnreadableFile(f"{name}: damaged or not a Word document ({type(exc).__name__}: {exc})") from None
    segments: list[Segment] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    first_title: str | None = None

    def close() -> None:
        if "".join(lines).strip():
            segments.append(Segment(text="\n".join(lines).strip(), section=[h for _, h in path]))
        lines.clear()

    for level, text in blocks:
        if level is None:
            lines.append(text)
            continue
        close()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, text))
        lines.append(text)
        if level <= 1 and first_title is None:
            first_title = text
    close()
    if not segments:
        raise UnreadableFile(f"{name}: no text in the document")
    title = (properties.title or "").strip() or first_title
    return Loaded(segments=segments, title=title, detected=_detected(properties))


def _blocks(document: Any) -> Any:
    """(heading level or None, text) of each paragraph with words, table rows as cells joined by ' | '."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            text = " ".join(item.text.split())
            if text:
                yield _level(item), text
        elif isinstance(item, Table):
            for row in item.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                if any(cells):
                    yield None, " | ".join(dict.fromkeys(cells))  # merged cells repeat: once each


def _level(paragraph: Any) -> int | None:
    style = getattr(paragraph.style, "name", "") or ""
    if style.lower() == "title":
        return 0
    found = _HEADING_STYLE.match(style.strip())
    return int(found[1]) if found else None


def _detected(properties: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    if (properties.author or "").strip():
        found["author"] = properties.author.strip()
    for when in (properties.created, properties.modified):
        if when is not None:
            found["date"] = when.date().isoformat()
            break
    return found
