"""MkDocs hooks for the documentation site (mkdocs.yml names this file).

The result pages quote model answers as they were given, and an answer citing two passages reads ``[1][2]``.
Markdown takes that for a reference link; mkdocs-autorefs (which mkdocstrings brings for the API reference's
cross-links) cannot resolve it, leaves the text as it was and logs a warning, which ``mkdocs build --strict``
counts as an error. A number never names an API object or a heading, so those warnings, and only those, are
dropped: any other reference that does not resolve still fails the build.

The tables of registered plug-ins (``<!-- catalog:NAME -->`` blocks, docs/architecture.md) are written from the
registries as each page is built (``tanglerag.catalog``), so the site never shows a stale one.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from tanglerag.catalog import filled

_CITATION_TARGET = re.compile(r"Could not find cross-reference target '\d+'$")


class _CitationsAreNotReferences(logging.Filter):
    """Drops autorefs' warning about a target that is a bare number: a citation, not a link."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _CITATION_TARGET.search(record.getMessage())


def on_startup(command: str, dirty: bool) -> None:
    """Filter the autorefs loggers, which exist once MkDocs has loaded its plugins (before this hook runs)."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("mkdocs.plugins.mkdocs_autorefs"):
            logging.getLogger(name).addFilter(_CitationsAreNotReferences())


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Every catalog block holding today's registries."""
    return filled(markdown)
