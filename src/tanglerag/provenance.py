"""Where in its file a passage stands: the metadata keys loaders write, and the place a citation shows.

Why a core module: loaders (index layer) write these keys into every chunk's metadata, and the layers that show
citations (``ask``, ``ask --json``, the inspector, chat, eval predictions) read them back; one place names the keys
and renders them, so a citation reads the same everywhere ("policy-2024.pdf p. 12, §Scope > Limits").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PATH = "path"
"""The file's path relative to the folder it was indexed from (the document's id): set for every file."""
SHA256 = "sha256"
"""The sha256 of the file's bytes, so ``index FOLDER --sync`` can tell a changed file without reading it."""
PAGE = "page"
"""The 1-based page of a paged file (PDF) a chunk comes from: its first, when it spans more than one."""
PAGES = "pages"
"""Every page a chunk's words come from, when there are more than one (a sentence a page break cut): ``[4, 5]``."""
SECTION = "section"
"""The headings a chunk stands under, outermost first (Markdown, HTML, Word): the path most of its words are under."""
SECTIONS = "sections"
"""Every heading path a chunk's words stand under, in reading order, when there are more than one (a two-line
section joined to the one before it): ``[["Pay", "Compensation"], ["Pay", "Escalation"]]``."""


def page_of(metadata: Mapping[str, Any]) -> int | None:
    """The page a passage's metadata names (a positive integer), else None."""
    page = metadata.get(PAGE)
    return page if isinstance(page, int) and not isinstance(page, bool) and page > 0 else None


def pages_of(metadata: Mapping[str, Any]) -> list[int] | None:
    """The pages a passage's metadata names (at least two, ascending, each a positive integer), else None."""
    pages = metadata.get(PAGES)
    if not isinstance(pages, list) or len(pages) < 2 or \
            not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in pages):
        return None
    return pages if pages == sorted(set(pages)) else None


def section_of(metadata: Mapping[str, Any]) -> list[str] | None:
    """The heading path a passage's metadata names (non-empty texts), else None."""
    section = metadata.get(SECTION)
    if isinstance(section, str):
        section = [section]
    if not isinstance(section, list) or not section or not all(isinstance(s, str) and s for s in section):
        return None
    return section


def sections_of(metadata: Mapping[str, Any]) -> list[list[str]] | None:
    """Every heading path a passage's metadata names (at least two, each a non-empty list of texts), else None."""
    sections = metadata.get(SECTIONS)
    if not isinstance(sections, list) or len(sections) < 2:
        return None
    paths = [section_of({SECTION: s}) for s in sections]
    return None if any(p is None for p in paths) else [p for p in paths if p is not None]


def location(metadata: Mapping[str, Any]) -> str | None:
    """Where a passage stands in its file, as a citation shows it (``policy-2024.pdf p. 12, §Scope > Limits``, or
    ``pp. 12-13`` for a chunk that spans two pages, ``§Pay > Compensation; §Pay > Escalation`` for one that joins
    two sections); None when its metadata names neither a page nor a section (a
    plain text file, a JSONL record)."""
    page, pages, section = page_of(metadata), pages_of(metadata), section_of(metadata)
    if page is None and section is None:
        return None
    path = metadata.get(PATH)
    name = path.rsplit("/", 1)[-1] if isinstance(path, str) and path else None
    shown_pages = f"pp. {pages[0]}-{pages[-1]}" if pages and pages[0] == page else f"p. {page}" if page else None
    named = sections_of(metadata) or ([section] if section else [])
    shown_sections = "; ".join(f"§{' > '.join(s)}" for s in named) or None
    place = ", ".join(part for part in (shown_pages, shown_sections) if part)
    return f"{name} {place}" if name else place


def places(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``location``, ``page`` and ``section`` of a passage as every listing of passages shows them (answer outputs,
    the run browser's passages): built here once so a citation reads the same in each."""
    return {"location": location(metadata), "page": page_of(metadata), "section": section_of(metadata)}
