"""One renderer for every table the package and its reports write: GitHub Markdown for files, rich for a terminal.

The Markdown is unpadded (``| a | b |`` rows under a ``|---|---|`` rule), so a regenerated report's diff shows the
numbers that changed rather than re-padded columns. Cells arrive already formatted: each report keeps its own number
formats beside the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.table import Table as RichTable

Align = Literal["left", "center", "right"] | None
"""A column's alignment; None states none (GitHub then aligns left, as for "left")."""

_RULES: dict[Align, str] = {None: "---", "left": ":---", "center": ":---:", "right": "---:"}


class Table:
    """Headers, rows of cells (``str()`` of each is what is shown), and optionally one alignment per column."""

    def __init__(self, headers: Sequence[str], rows: Iterable[Sequence[object]] = (),
                 align: Sequence[Align] = ()) -> None:
        if align and len(align) != len(headers):
            raise ValueError(f"{len(align)} alignments for {len(headers)} columns")
        self.headers = list(headers)
        self.align = list(align)
        self.rows: list[list[str]] = []
        self.extend(rows)

    def add(self, *cells: object) -> None:
        """Append a row; a row of another width than the headers' would shift every later column, so it is refused."""
        if len(cells) != len(self.headers):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.headers)} columns: {cells!r}")
        self.rows.append([str(cell) for cell in cells])

    def extend(self, rows: Iterable[Sequence[object]]) -> None:
        """Append each row, as ``add`` does."""
        for row in rows:
            self.add(*row)

    def lines(self) -> list[str]:
        """The Markdown lines: header, rule, then one per row (for reports that assemble text line by line)."""
        return [_markdown_row(self.headers), "|" + "".join(f"{_RULES[a]}|" for a in self._aligns()),
                *(_markdown_row(row) for row in self.rows)]

    def last_line(self) -> str:
        """The Markdown line of the row added last: for scripts that print each row as soon as it is measured."""
        return _markdown_row(self.rows[-1])

    def markdown(self) -> str:
        """The table as GitHub Markdown, without a trailing newline."""
        return "\n".join(self.lines())

    def rich(self) -> RichTable:
        """The table for a rich Console; cells are plain text, never rich markup (``[...]`` is a CI, not a style).

        rich is imported only here: benchmark scripts that measure their own memory import this module."""
        from rich.table import Table as RichTable
        from rich.text import Text

        table = RichTable()
        for header, align in zip(self.headers, self._aligns(), strict=True):
            table.add_column(Text(header), justify=align or "left")
        for row in self.rows:
            table.add_row(*(Text(cell) for cell in row))
        return table

    def _aligns(self) -> list[Align]:
        return self.align or [None] * len(self.headers)


def _markdown_row(cells: Sequence[str]) -> str:
    """``| a | b |``, with a ``|`` inside a cell escaped so that it does not start a column of its own."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
