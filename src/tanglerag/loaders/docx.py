"""Word files (.docx), with python-docx: paragraphs and table cells in document order, cut into sections at the
paragraphs styled as headings (``Heading 1``..``Heading 9``, ``Title``), with the title, author and dates of the
file's core properties when it has them. Word keeps no pages in the file (its layout decides them), so a .docx has
sections only. The zip is measured before python-docx unpacks it (``bounds.UNPACKED_GROWTH_BYTES``)."""

from __future__ import annotations

import copy
import io
import re
import zipfile
from typing import Any

from tanglerag.loaders import bounds
from tanglerag.loaders.base import Loaded, Segment, UnreadableFile

_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.I)
_SLACK = 64 << 20
"""Room past the bound for the last block read: zipfile cuts a part off at the size it is opened with, and a part
cut off fails its checksum, which would hide the bound it passed. A block is at most a megabyte, so anything above
one would do; 64 MB leaves room for a deflate stream's own buffering at no cost (nothing is allocated for it)."""


def load_docx(name: str, data: bytes) -> Loaded:
    """The document's text in sections; a file that is not a Word document, or holds no text, is refused."""
    import docx
    import lxml.etree
    from docx.opc.exceptions import PackageNotFoundError

    if not data.startswith(b"PK"):
        raise UnreadableFile(f"{name}: not a Word .docx file (not a zip package; an old .doc? save it as .docx)")
    try:
        _check_unpacked_size(name, data)
        document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document))
        properties = _core_properties(document)
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, EOFError, lxml.etree.LxmlError) as exc:
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
    title = (properties.title or "").strip() if properties is not None else ""
    return Loaded(segments=segments, title=title or first_title, detected=_detected(properties))


def _check_unpacked_size(name: str, data: bytes) -> None:
    """Refuse a zip that unpacks past the bound, before python-docx unpacks every part whole into memory. Each part
    is unpacked here a block at a time as far as its data really goes, not as far as its header says (a header
    that understates a part would let the data expand unchecked, all at once, in python-docx), and counted,
    stopping at the bound; a part its header misstates, or packed otherwise than Word packs parts, is damage."""
    allowed, growth = len(data) + bounds.UNPACKED_GROWTH_BYTES, bounds.UNPACKED_GROWTH_BYTES // bounds.MB
    unpacked = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise zipfile.BadZipFile(f"part {info.filename!r} is encrypted, or packed otherwise than stored or "
                                         "deflated")
            whole = copy.copy(info)
            whole.file_size = allowed + _SLACK  # zipfile stops at the header's size: read to the data's end
            with archive.open(whole) as part:
                size = 0
                while block := part.read(1 << 20):
                    size += len(block)
                    if unpacked + size > allowed:
                        raise UnreadableFile(f"{name}: its zip unpacks to more than {growth} MB beyond its own size "
                                             "(ingest bound)")
            if size != info.file_size:
                raise zipfile.BadZipFile(f"part {info.filename!r} unpacks to {size} bytes, its header says "
                                         f"{info.file_size}")
            unpacked += size


def _core_properties(document: Any) -> Any | None:
    """The file's core properties, or None when it has none: python-docx then makes up its own (the title 'Word
    Document', today's date), which the file never stated and which would make it look newest."""
    from docx.opc.constants import RELATIONSHIP_TYPE

    rels = document.part.package.rels.values()
    return document.core_properties if any(r.reltype == RELATIONSHIP_TYPE.CORE_PROPERTIES for r in rels) else None


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


def _detected(properties: Any | None) -> dict[str, str]:
    found: dict[str, str] = {}
    if properties is None:
        return found
    if (properties.author or "").strip():
        found["author"] = properties.author.strip()
    for when in (properties.created, properties.modified):
        if when is not None:
            found["date"] = when.date().isoformat()
            break
    return found
