"""PDF files, page by page, with pypdf.

Why pypdf: it is BSD-licensed and pure Python (nothing to build, safe for a library others embed), and on the test
PDFs it recovered as many of ``pdftotext``'s characters as pdfminer.six while reading 2-5x more pages a second
(docs/benchmarks.md, "Document formats"); PyMuPDF is faster still but AGPL. Each page is one piece, so every chunk
carries its page (1-based, as a viewer numbers them), or its two pages where it ends a sentence the page break cut. The bookmark in force on a page
(the PDF's outline, when it has one) is that page's section. Title, author and creation date come from the file's
document information. A PDF is read under two bounds: its page count (``bounds.PDF_PAGES``, from the page tree before
any page is read) and the time its pages take (``bounds.PDF_SECONDS``, checked after each page).
"""

from __future__ import annotations

import datetime
import io
import logging
import re
import time
from typing import Any

from tanglerag.loaders import bounds
from tanglerag.loaders.base import Loaded, Segment, UnreadableFile

logging.getLogger("pypdf").setLevel(logging.ERROR)  # it logs every repaired cross-reference as a warning
_PDF_DATE = re.compile(r"^D?:?(\d{4})(\d{2})?(\d{2})?")


def load_pdf(name: str, data: bytes) -> Loaded:
    """One piece per page with text; a PDF that is encrypted, damaged, not a PDF, or has no text at all is an
    ``UnreadableFile`` saying which."""
    import pypdf  # a second or so of import: only when a PDF is read
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    if b"%PDF-" not in data[:1024]:
        raise UnreadableFile(f"{name}: not a PDF (no %PDF header; is the extension wrong?)")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile(f"{name}: encrypted PDF (it needs a password); save a copy without one")
        texts = _page_texts(name, reader)
        sections = _sections_by_page(reader)
        info: Any = reader.metadata or {}
    except (FileNotDecryptedError, DependencyError) as exc:
        raise UnreadableFile(f"{name}: encrypted PDF that cannot be opened ({exc})") from None
    except NotImplementedError as exc:  # an encryption handler (certificate security) or a filter; exc says which
        raise UnreadableFile(f"{name}: uses a PDF feature pypdf does not implement ({_short(exc)})") from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            AssertionError, ZeroDivisionError, OSError) as exc:  # pypdf meets damage in many shapes
        raise UnreadableFile(f"{name}: damaged PDF ({type(exc).__name__}: {_short(exc)})") from None
    segments = [Segment(text=text, page=number, section=sections.get(number, []))
                for number, text in enumerate(texts, start=1) if text.strip()]
    if not segments:
        raise UnreadableFile(f"{name}: no text in its {len(texts)} page(s) (scanned or image-only? run OCR first)")
    return Loaded(segments=segments, title=_info(info, "/Title"), detected=_detected(info))


def _page_texts(name: str, reader: Any) -> list[str]:
    """Each page's text, once the page count is within the bound, stopping when the time bound has passed."""
    count = len(reader.pages)
    if count > bounds.PDF_PAGES:
        raise UnreadableFile(f"{name}: {count:,} pages, over the {bounds.PDF_PAGES:,}-page ingest bound")
    deadline = time.monotonic() + bounds.PDF_SECONDS
    texts: list[str] = []
    for page in reader.pages:
        texts.append(page.extract_text() or "")
        if time.monotonic() > deadline and len(texts) < count:
            raise UnreadableFile(f"{name}: reading its pages took over {bounds.PDF_SECONDS:g} s (ingest bound); "
                                 f"{len(texts)} of {count} read")
    return texts


def _sections_by_page(reader: Any) -> dict[int, list[str]]:
    """Page number -> the bookmark path in force there (the last one starting on or before it). A broken outline
    gives no sections, not an error."""
    starts: list[tuple[int, int, list[str]]] = []

    def walk(items: list[Any], path: list[str]) -> None:
        parent: str | None = None  # a nested list holds the children of the item before it
        for item in items:
            if isinstance(item, list):
                walk(item, [*path, parent] if parent else path)
                continue
            parent = str(getattr(item, "title", "") or "").strip() or None
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:  # a dangling destination: leave that bookmark out
                continue
            if parent and page > 0:
                starts.append((page, len(starts), [*path, parent]))

    try:
        walk(reader.outline, [])
    except Exception:  # an outline pypdf cannot walk: the pages keep their text, without sections
        return {}
    by_page: dict[int, list[str]] = {}
    current: list[str] = []
    ordered = sorted(starts)
    cursor = 0
    for number in range(1, len(reader.pages) + 1):
        while cursor < len(ordered) and ordered[cursor][0] <= number:
            current = ordered[cursor][2]
            cursor += 1
        if current:
            by_page[number] = current
    return by_page


def _info(info: Any, key: str) -> str | None:
    try:
        value = info.get(key)
    except Exception:  # an unreadable information dictionary
        return None
    text = str(value).strip() if value is not None else ""
    return text or None


def _detected(info: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    author = _info(info, "/Author")
    if author:
        found["author"] = author
    for key in ("/CreationDate", "/ModDate"):
        date = pdf_date(_info(info, key))
        if date:
            found["date"] = date
            break
    return found


def pdf_date(value: str | None) -> str | None:
    """A PDF date (``D:20241012171435+00'00'``) as ISO text to the precision it gives (``2024-10-12``, ``2024-10``,
    ``2024``); None when it is not one."""
    found = _PDF_DATE.match(value or "")
    if not found:
        return None
    year, month, day = found.groups()
    try:
        datetime.date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return None
    return "-".join(part for part in (year, month, day if month else None) if part)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:117] + "..."
