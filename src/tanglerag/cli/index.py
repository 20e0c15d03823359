"""``tanglerag index``: build, extend (``--add``, ``--replace``), shrink (``--remove``) or keep in step with a folder
(``--sync``) a persistent index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from tanglerag.cli.common import ConfigOpt, SetOpt, VerboseOpt, console, load_settings
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.index.corpus import corpus_reader
from tanglerag.index.extend import add_streaming
from tanglerag.index.passage_index import PassageIndex, remove_documents
from tanglerag.index.streaming import build_streaming
from tanglerag.index.sync import SyncPlan, sync_folder
from tanglerag.ingest import stream_chunks
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.types import Passage
from tanglerag.where import authority_tiers

app = typer.Typer()
T = TypeVar("T")


@app.command()
def index(
    out: Annotated[Path, typer.Option("--out", "-o", help="index folder to create, extend or shrink")],
    corpus: Annotated[Path | None, typer.Argument(help=(
        "JSONL file ({id,title,text}, optionally date, source, authority, meta), the DPR Wikipedia passages .tsv "
        "(id, text, title), a folder of files or one file: .txt, .md (front matter read as metadata), .pdf, .html, "
        ".docx"))] = None,
    index_type: Annotated[str | None, typer.Option("--index-type", help="flat | hnsw | ivf | ivfpq")] = None,
    bm25: Annotated[bool, typer.Option("--bm25", help="also build a BM25 index")] = False,
    add: Annotated[bool, typer.Option("--add", help="add to an existing index instead of replacing it")] = False,
    replace: Annotated[bool, typer.Option("--replace", help=(
        "with --add: replace documents whose id is known but whose text or metadata changed (else refused)"))] = False,
    remove: Annotated[str | None, typer.Option("--remove", help=(
        "comma-separated document ids to remove from the index in --out (all of their chunks)"))] = None,
    skip_bad: Annotated[bool, typer.Option("--skip-bad-lines", help="warn and skip malformed JSONL lines")] = False,
    sync: Annotated[bool, typer.Option("--sync", help=(
        "make the index in --out hold the folder's files as they are now: new and changed files (by content hash) "
        "indexed, deleted ones removed, unchanged ones skipped"))] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Build (or extend with --add, or shrink with --remove) a persistent index of a corpus."""
    settings = load_settings(config, set_, verbose, index__index_type=index_type, index__bm25=bm25 or None)
    if remove is not None:
        _remove(out, remove, corpus, Runtime(settings).embedder)
        return
    if corpus is None:
        raise InputError("give a corpus to index (or --remove IDS to take documents out of --out)")
    if replace and not add:
        raise InputError("--replace only applies with --add (without --add the index is built anew)")
    if sync:
        if add:
            raise InputError("--sync adds, replaces and removes by itself: drop --add")
        _sync(out, corpus, settings, index_type, bm25)
        return
    read = corpus_reader(corpus, settings.index, skip_bad=skip_bad, tiers=authority_tiers(settings))
    embedder = Runtime(settings).embedder
    if not add:
        _summary(out, _with_progress(read, lambda advance: build_streaming(out, read(), embedder, settings.index,
                                                                           progress=advance)))
        return

    def keeps_settings(existing: PassageIndex) -> None:
        if index_type and index_type != existing.config.index_type or bm25 and existing.bm25 is None:
            raise InputError(f"{out} is a {existing.config.index_type} index"
                             f"{' with BM25' if existing.bm25 else ''}; --add keeps its settings: "
                             "drop --index-type/--bm25, or rebuild without --add")

    idx, changes = _with_progress(read, lambda advance: add_streaming(
        out, read, embedder, settings.index, replace=replace, progress=advance, check=keeps_settings))
    replaced = f"; replaced {', '.join(changes.replaced)}" if changes.replaced else ""
    console.print(f"added {changes.added} new passages ({changes.unchanged} already present{replaced})")
    _summary(out, idx)


def _with_progress(read: Callable[[], Iterator[Passage]], write: Callable[[Callable[[int], None]], T]) -> T:
    """Run ``write`` with a progress bar over the corpus: a counting pass first (cheap, no model; a bad corpus is
    refused before any embedding) gives the bar its total; ``write`` reports each batch it has read."""
    total = sum(1 for _ in read())
    columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]} passages/s"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("index", total=total, rate="-")

        def advance(n: int) -> None:
            bar.advance(task, n)
            speed = bar.tasks[0].speed
            bar.update(task, rate=f"{speed:.0f}" if speed else "-")

        return write(advance)


def _sync(out: Path, folder: Path, settings: Settings, index_type: str | None, bm25: bool) -> None:
    """``--sync``: one line with what the folder holds against the index, then a progress bar (passages embedded, at
    what rate) over the new and changed files only."""
    tiers = authority_tiers(settings)
    embedder = Runtime(settings).embedder

    def keeps_settings(existing: PassageIndex) -> None:
        if index_type and index_type != existing.config.index_type or bm25 and existing.bm25 is None:
            raise InputError(f"{out} is a {existing.config.index_type} index; --sync keeps its settings: drop "
                             "--index-type/--bm25, or rebuild without --sync")

    def chunks(documents: Iterator[Passage]) -> Iterator[Passage]:
        return stream_chunks(documents, str(folder), chunk_size=settings.index.chunk_words,
                             chunk_overlap=settings.index.chunk_overlap, tiers=tiers)

    columns = (TextColumn("indexing"), BarColumn(), TextColumn("{task.completed} passages"),
               TextColumn("{task.fields[rate]} passages/s"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("sync", total=None, rate="-")

        def advance(n: int) -> None:
            bar.advance(task, n)
            speed = bar.tasks[0].speed
            bar.update(task, rate=f"{speed:.0f}" if speed else "-")

        def planned(plan: SyncPlan) -> int:
            console.print(f"sync {folder}: {plan.summary()}")
            return 0

        idx, plan, changes = sync_folder(out, folder, embedder, settings.index, chunks=chunks, progress=advance,
                                         on_plan=planned, check=keeps_settings)
    if idx is None:
        console.print(f"index {out} already holds the folder as it is: nothing written")
        return
    console.print(f"synced: {changes.added} passages embedded, {changes.removed} removed "
                  f"({len(changes.replaced)} changed and {len(plan.deleted)} deleted files)")
    _summary(out, idx)


def _remove(out: Path, ids: str, corpus: Path | None, embedder: TextEmbedder) -> None:
    doc_ids = [i.strip() for i in ids.split(",") if i.strip()]
    if corpus is not None or not doc_ids:
        raise InputError("--remove takes comma-separated document ids and no corpus")
    idx, changes = remove_documents(out, doc_ids, embedder)
    console.print(f"removed {len(doc_ids)} document(s): {changes.removed} passages")
    _summary(out, idx)


def _summary(out: Path, idx: PassageIndex) -> None:
    m = idx.manifest()
    console.print(f"index {out}: {m.count} passages, {m.index_type}{' + bm25' if m.bm25 else ''}, "
                  f"{m.embedding_model} ({m.dimension}-d)")
