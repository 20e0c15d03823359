"""The DPR Wikipedia passages file (``psgs_w100.tsv``: 21M passages of 100 words, a header ``id  text  title`` and
one tab-separated passage a line), read as a stream of passages or written out as our corpus JSONL.

Users download the file themselves (it is 13 GB); ``tanglerag index psgs_w100.tsv`` reads it directly, and
``tanglerag convert dpr`` writes it as JSONL (for tools that read our corpus format, or a Ray cluster that reads
JSONL in parallel). It is read as DPR's own code reads it, with ``csv`` and a tab delimiter: texts are quoted,
with a quote inside doubled (``"Aaron ( or ; ""Ahärôn"") is ..."``), and the quoting comes off. Nothing is held
but the line being read, so the file never needs to fit in memory.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tanglerag.errors import IngestError
from tanglerag.fileio import reporting_disk_full
from tanglerag.types import Passage

__all__ = ["HEADER", "check_header", "convert_dpr", "dpr_rows", "read_dpr_tsv"]

HEADER = ("id", "text", "title")
"""The first line of a DPR passages file, in this order."""


def read_dpr_tsv(path: Path) -> Iterator[Passage]:
    """Each passage of a DPR passages file, in file order: its id as written (``"1"``), its title and its text. A file
    without DPR's header, or a row without exactly three fields, an empty id or an empty text, is refused naming
    file and line."""
    with path.open(encoding="utf-8", newline="") as fh:
        try:
            check_header(fh.readline(), path)
        except UnicodeDecodeError:
            raise IngestError(f"{path}:1: not UTF-8 text") from None
        yield from dpr_rows(fh, str(path), first_line=2)


def check_header(line: str, path: Path) -> None:
    """Refuse a first line that is not DPR's header (IngestError naming the file)."""
    header = next(csv.reader([line], delimiter="\t"), None) if line.strip() else None
    if header is None or tuple(field.strip().lower() for field in header) != HEADER:
        raise IngestError(f"{path}:1: not a DPR passages file: its first line must be the tab-separated "
                          f"columns {', '.join(HEADER)} (got {_shown(header)})")


def dpr_rows(lines: Iterable[str], source: str, *, first_line: int) -> Iterator[Passage]:
    """Passages from DPR rows (lines after the header; ``first_line``: the line number of the first, for errors):
    what ``read_dpr_tsv`` reads, and what a shard of the file (``index --engine ray``) reads."""
    rows = csv.reader(lines, delimiter="\t")
    try:
        for row in rows:
            if not row:
                continue
            line = first_line - 1 + rows.line_num
            if len(row) != len(HEADER):
                raise IngestError(f"{source}:{line}: expected id, text and title separated by tabs, got "
                                  f"{len(row)} field(s)")
            if not row[0].strip() or not row[1].strip():
                raise IngestError(f"{source}:{line}: empty {'id' if not row[0].strip() else 'text'}")
            yield Passage(id=row[0].strip(), title=row[2], text=row[1])
    except UnicodeDecodeError:
        raise IngestError(f"{source}:{first_line + rows.line_num}: not UTF-8 text") from None
    except csv.Error as exc:
        raise IngestError(f"{source}:{first_line - 1 + rows.line_num}: {exc}") from None


def _shown(header: list[str] | None) -> str:
    return "an empty file" if header is None else repr("\t".join(header)[:80])


def convert_dpr(tsv: Path, out: Path, *, progress: Callable[[int], None] | None = None,
                every: int = 100_000) -> int:
    """Write ``tsv``'s passages to ``out`` as corpus JSONL (``{"id", "title", "text"}`` a line) and return how many.
    Written to a temporary file beside ``out`` and renamed when complete, so an interrupted conversion leaves no
    truncated corpus under the name; ``progress`` hears every ``every`` passages written."""
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    count = 0
    try:
        with reporting_disk_full(out), tmp.open("w", encoding="utf-8", newline="\n") as fh:
            for passage in read_dpr_tsv(tsv):
                fh.write(json.dumps({"id": passage.id, "title": passage.title, "text": passage.text},
                                    ensure_ascii=False))
                fh.write("\n")
                count += 1
                if progress is not None and count % every == 0:
                    progress(every)
            if progress is not None and count % every:
                progress(count % every)
        if count == 0:
            raise IngestError(f"{tsv} holds no passages")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return count
