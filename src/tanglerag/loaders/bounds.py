"""The declared bounds every file is read under (docs/reliability.md lists them).

Why: a file's size says little about the work of parsing it - a 274 KB Word zip unpacked to gigabytes, a 600 KB
PDF named 100,000 pages, 466 bytes of YAML aliases grew without end. Each bound is checked before the work it
guards where it can be, and a file past one is refused with one line naming the bound: a folder skips it with a
warning and reads the rest, an upload is refused.
"""

from __future__ import annotations

MB = 1_000_000

FILE_BYTES = 512 * MB
"""The largest file a loader is given: a folder's file is read whole into memory."""

UNPACKED_GROWTH_BYTES = 50 * MB
"""How much more than its own size a Word file's zip may unpack to. A zip bomb grows thousands of times; a Word
file's XML grows a few times and its pictures do not grow, so a large file of photos stays well inside."""

PDF_PAGES = 10_000
"""The most pages a PDF may have (a long manual has a few thousand)."""

PDF_SECONDS = 600.0
"""How long reading a PDF's pages may take, checked after each page."""

HTML_ELEMENTS = 1_000_000
"""The most elements (tags opened) an HTML page may hold; counted on the bytes, before lxml builds the tree."""

FRONT_MATTER_BYTES = 64_000
"""The largest YAML front matter a Markdown file may have (PyYAML reads about a megabyte a second)."""
