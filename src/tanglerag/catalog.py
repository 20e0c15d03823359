"""What is registered, as the Markdown tables docs/architecture.md shows (method families, stores, file loaders and
embedders, each read from its registry), and the tables a family adds (``Family.tables``: the ledger's rules, in
docs/conflicts.md).

Why generated: a hand-kept table of plug-ins goes stale the day one is added. ``scripts/docs_hooks.py`` writes these
tables into the page when the site builds, and ``tests/test_docs_map.py`` fails when the copy committed in the page
(read on GitHub as it is) differs from them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tanglerag.embeddings import EMBEDDERS
from tanglerag.family import FAMILIES, Family, families, resolve
from tanglerag.loaders import LOADERS
from tanglerag.registry import Registry
from tanglerag.stores.registry import STORES
from tanglerag.tables import Table

BLOCK = re.compile(r"(<!-- catalog:(\w+) -->\n)(.*?)(<!-- /catalog -->)", re.DOTALL)
"""A generated table in a page: ``<!-- catalog:NAME -->``, the table, ``<!-- /catalog -->``."""


def families_table() -> str:
    rows = [[f"`{family.name}`", ", ".join(sorted({cls.paper for cls in family.methods})) or "-",
             ", ".join(f"`{name}`" for name in family.method_names()) or "-",
             f"`{family.section_name}`" if family.settings else "-", _adds(family), _where(FAMILIES, family.name)]
            for family in FAMILIES.values()]
    return Table(["family", "paper", "methods", "settings section", "also", "declared in"], rows).markdown()


def _adds(family: Family) -> str:
    """The retrievers, dataset tasks and CLI commands a family adds besides its methods."""
    parts = [f"retriever `{name}`" for name in family.retrievers] + [f"task `{name}`" for name in family.tasks]
    parts += [f"commands in `{ref.partition(':')[0]}`" for ref in family.commands]
    return ", ".join(parts) or "-"


def _where(registry: Registry[Any], name: str) -> str:
    reference = registry.reference(name)
    return f"`{reference.target}`" if reference is not None else "a plug-in"


def _extra(registry: Registry[Any], name: str) -> str:
    reference = registry.reference(name)
    return f"`{reference.extra}`" if reference is not None and reference.extra else "core"


def lazy_table(registry: Registry[Any], label: str) -> str:
    """One row per name: where it lives and the extra that installs what it needs (nothing is imported)."""
    rows = [[f"`{name}`", _where(registry, name), _extra(registry, name)] for name in registry.names()]
    return Table([label, "module:attribute", "extra"], rows).markdown()


TABLES: dict[str, Callable[[], str]] = {"families": families_table,
          "stores": lambda: lazy_table(STORES, "store.backend"),
          "loaders": lambda: lazy_table(LOADERS, "file extension"),
          "embedders": lambda: lazy_table(EMBEDDERS, "embedding.backend")}


def _made_by(reference: str) -> str:
    """The table a family's ``"module:function"`` makes."""
    return str(resolve(reference)())


TABLES.update({name: functools.partial(_made_by, reference)
               for family in families() for name, reference in family.tables.items()})
"""The core tables, then those the families add (``Family.tables``: the ledger's rules)."""


def filled(page: str) -> str:
    """``page`` with every catalog block holding today's table."""
    return BLOCK.sub(lambda m: f"{m.group(1)}{TABLES[m.group(2)]()}\n{m.group(4)}", page)


PAGES = (Path("docs/architecture.md"), Path("docs/conflicts.md"))
"""The pages holding catalog blocks."""


def refresh(pages: tuple[Path, ...] = PAGES) -> None:
    """Rewrite each page's catalog blocks in place (after adding a plug-in to a registry, or a rule)."""
    for page in pages:
        page.write_text(filled(page.read_text()))
