"""``tanglerag search``: the passages a query retrieves, ranked, with where each comes from, and no model call.

Retrieval on its own is what one checks first: what an index holds, what ``ask`` would be given, which file and page
says something. It runs in the time a query takes to embed and rank, where ``ask`` waits for the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from tanglerag.cli.ask import WHERE_HELP, passage_line
from tanglerag.cli.common import (
    ConfigOpt,
    SetOpt,
    TerminalConsole,
    VerboseOpt,
    console,
    load_settings,
    printable,
    terminal_json,
)
from tanglerag.cli.store_options import CollectionOpt, StoreOpt, StorePathOpt, StoreUrlOpt, check_source, store_flags
from tanglerag.outputs import SearchOutput
from tanglerag.runtime import Runtime, SearchRequest
from tanglerag.stages.retrieve import FloorStep
from tanglerag.tracking import Tracker
from tanglerag.types import RetrievedPassage
from tanglerag.where import parse_where

app = typer.Typer()


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="what to look for (a question or a few words)")],
    index_dir: Annotated[Path | None, typer.Option("--index", "-i", help="index folder from `tanglerag index`")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", "-k", help="passages to list")] = None,
    where: Annotated[str | None, typer.Option("--where", "-w", help=WHERE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the passages as JSON")] = False,
    store: StoreOpt = None, store_url: StoreUrlOpt = None, store_path: StorePathOpt = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """List the passages the index (or store) ranks first for QUERY, with file, page, section, date, source and score; no LLM."""
    if where is not None:
        parse_where(where, tiers=None)  # one line naming what cannot be read, before any setting is loaded
    settings = load_settings(config, set_, verbose, retrieval__top_k=top_k, retrieval__where=where,
                             **store_flags(store, store_url, store_path, collection))
    check_source(settings, index_dir)
    tracker = Tracker()
    hits = Runtime(settings, index_dir=index_dir).search(SearchRequest(query=query, tracker=tracker))
    if as_json:
        output = SearchOutput.from_hits(query, hits, tracker.usage).model_dump(mode="json")
        sys.stdout.write(terminal_json(json.dumps(output, ensure_ascii=False, indent=2), sys.stdout) + "\n")
        return
    if settings.retrieval.where and not hits:
        console.print(f"no passage passes the filter {settings.retrieval.where!r}", markup=False)
    print_passages(hits, tracker.usage.totals()["seconds"])
    for step in tracker.steps:  # the passages under the relevance floor, named rather than silently missing
        if isinstance(step, FloorStep):
            TerminalConsole().print(printable(step.headline(), one_line=True), markup=False, highlight=False)


def print_passages(hits: list[RetrievedPassage], seconds: float) -> None:
    """One line a passage, as ``ask`` lists the passages it was given, then how long the search took."""
    out = TerminalConsole()
    for n, hit in enumerate(hits, 1):
        out.print(passage_line(n, hit))
    out.print(f"[dim]{len(hits)} passage{'s' * (len(hits) != 1)} in {seconds:.3f}s, no LLM call[/]")
