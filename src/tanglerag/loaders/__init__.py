"""Files as people have them, read into text with its places: one loader per file type, found by extension.

``LOADERS`` maps a lower-case extension to a loader (text, Markdown, PDF, HTML, Word: the table below, each module
imported when a file of its type is first read; a plug-in may add others through the ``tanglerag.loaders``
entry-point group). A loader returns the file's text cut where its structure cuts
it (pages, sections) and the metadata the file declares; ``tanglerag.ingest`` turns that into a document whose
chunks each carry their page and section path.
"""

from __future__ import annotations

from tanglerag.loaders.base import LOADERS, Loaded, Loader, Segment, UnreadableFile

for _extension, _target in (("txt", "text:load_text"), ("rst", "text:load_text"), ("md", "text:load_markdown"),
                            ("markdown", "text:load_markdown"), ("html", "html:load_html"), ("htm", "html:load_html"), ("xhtml", "html:load_html"),
                            ("pdf", "pdf:load_pdf"), ("docx", "docx:load_docx")):
    LOADERS.register_lazy(_extension, f"tanglerag.loaders.{_target}")

__all__ = ["LOADERS", "Loaded", "Loader", "Segment", "UnreadableFile", "extension", "loader_for"]


def extension(name: str) -> str:
    """A file name's extension, lower case, without the dot ('' when it has none)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def loader_for(name: str) -> Loader | None:
    """The loader for this file name's type, or None when no loader reads it."""
    return LOADERS.find(extension(name))
