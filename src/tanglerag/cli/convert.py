"""``tanglerag convert dpr``: the DPR Wikipedia passages file as our corpus JSONL, streamed (``tanglerag.dpr``).

``tanglerag index psgs_w100.tsv`` reads the file directly; converting is for a corpus other tools read as JSONL,
or that a Ray cluster (``index --engine ray``) reads in parallel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tanglerag.cli.common import console, rate_progress
from tanglerag.dpr import convert_dpr
from tanglerag.errors import InputError

convert_app = typer.Typer(no_args_is_help=True, help="Convert downloaded corpora into tanglerag's corpus JSONL.")


@convert_app.command("dpr")
def dpr(
    tsv: Annotated[Path, typer.Argument(help="the DPR passages file (psgs_w100.tsv: id, text, title, tab-separated)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="corpus JSONL to write ({id, title, text} a line)")],
) -> None:
    """Write a DPR passages TSV as corpus JSONL, one passage at a time (the file need not fit in memory)."""
    if not tsv.is_file():
        raise InputError(f"DPR passages file not found: {tsv}")
    if out.resolve() == tsv.resolve():
        raise InputError("--out must name another file than the TSV it converts")
    with rate_progress("converting", "passages") as advance:
        count = convert_dpr(tsv, out, progress=advance)
    console.print(f"wrote {count:,} passages to {out}")
