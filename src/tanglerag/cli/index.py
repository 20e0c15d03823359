"""``tanglerag index``: build, extend (``--add``, ``--replace``), shrink (``--remove``) or keep in step with a folder
(``--sync``) a persistent index."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from tanglerag.cli.common import ConfigOpt, SetOpt, VerboseOpt, console, load_settings, rate_progress
from tanglerag.cli.store_options import CollectionOpt, StoreOpt, StorePathOpt, StoreUrlOpt, store_flags
from tanglerag.embeddings import Embedder, TextEmbedder, embedder_identity
from tanglerag.errors import InputError
from tanglerag.index.corpus import corpus_reader
from tanglerag.index.extend import add_streaming
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import PassageIndex, remove_documents
from tanglerag.index.ray_ingest import EmbedderFactory, embed_shards
from tanglerag.index.shard_build import build_from_shards
from tanglerag.index.shards import open_shards, plan_shards
from tanglerag.index.streaming import build_streaming
from tanglerag.index.sync import SyncPlan, sync_folder
from tanglerag.ingest import read_folder_files, stream_chunks, warnings_once
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.stores import documents as store_documents
from tanglerag.stores.base import VectorStore
from tanglerag.stores.factory import build_store
from tanglerag.stores.registry import capabilities
from tanglerag.types import Passage
from tanglerag.where import authority_tiers

app = typer.Typer()
T = TypeVar("T")


@app.command()
def index(
    out: Annotated[Path | None, typer.Option("--out", "-o", "--index", help=(
        "index folder to create, extend or shrink (--index, as ask and serve name it, works too)"))] = None,
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
        "comma-separated document ids to remove from the index in --out or the --store collection (all of their "
        "chunks)"))] = None,
    skip_bad: Annotated[bool, typer.Option("--skip-bad-lines", help="warn and skip malformed JSONL lines")] = False,
    sync: Annotated[bool, typer.Option("--sync", help=(
        "make the index in --out (or the --store collection) hold the folder's files as they are now: new and changed "
        "files (by content hash) indexed, deleted ones removed, unchanged ones skipped"))] = False,
    engine: Annotated[str, typer.Option("--engine", help=(
        "local: embed in this process; ray: embed shards of a .jsonl, .parquet or DPR .tsv file on Ray actors "
        "(resumable by shard), then build here"))] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help=(
        "with --engine ray: the Ray cluster to join (default: start a local one)"))] = None,
    ray_actors: Annotated[int, typer.Option("--ray-actors", min=1, max=1024, help=(
        "with --engine ray: embedding actors (one GPU each where the cluster has GPUs, at most one a GPU)"))] = 2,
    shards: Annotated[Path | None, typer.Option("--shards", help=(
        "with --engine ray: where embedded shards are kept, on a file system every node sees "
        "(default: OUT.shards beside the index); a rerun embeds only the shards missing there"))] = None,
    store: StoreOpt = None, store_url: StoreUrlOpt = None, store_path: StorePathOpt = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Build (or extend with --add, or shrink with --remove) a persistent index of a corpus, or write it into a
    vector store's collection (--store)."""
    settings = load_settings(config, set_, verbose, index__index_type=index_type, index__bm25=bm25 or None,
                             **store_flags(store, store_url, store_path, collection))
    if not capabilities(settings).index_folder:
        _into_store(corpus, settings, skip_bad, remove=remove, sync=sync, index_only=out is not None or engine != "local")
        return
    out = _folder(out)
    if remove is not None:
        _remove(out, remove, corpus, Runtime(settings).embedder)
        return
    if corpus is None:
        raise InputError("give a corpus to index (or --remove IDS to take documents out of --out)")
    if engine not in {"local", "ray"}:
        raise InputError(f"--engine is local or ray, not {engine!r}")
    if engine == "ray":
        if add or sync or replace:
            raise InputError("--engine ray builds a new index: drop --add, --replace and --sync")
        _index_on_ray(out, corpus, settings, ray_address, ray_actors, shards)
        return
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


def _folder(out: Path | None) -> Path:
    if out is None:
        raise InputError("give the index folder to write (--out DIR), or a store (--store qdrant --store-url URL "
                         "--collection NAME)")
    return out


def _into_store(corpus: Path | None, settings: Settings, skip_bad: bool, *, remove: str | None, sync: bool,
                index_only: bool) -> None:
    """Write the corpus into the store as for an index (each document written replaces all of its chunks), remove
    documents from it (``--remove``), or make it hold a folder as it is now (``--sync``): ``stores/documents.py``.
    ``index_only``: options of the embedded index were given too (refused)."""
    if index_only:
        raise InputError(f"--store {settings.store.backend} writes into a collection: drop --out and --engine")
    embedder = Runtime(settings).embedder
    target = build_store(settings, embedder)
    try:
        if remove is not None:
            gone = store_documents.remove_documents(target, [doc.strip() for doc in remove.split(",") if doc.strip()])
            console.print(f"removed {gone} passages; {target.count()} held")
            return
        if corpus is None:
            raise InputError("give a corpus to write into the store")
        if sync:
            _sync_store(target, corpus, settings, embedder)
            return
        read = corpus_reader(corpus, settings.index, skip_bad=skip_bad, tiers=authority_tiers(settings))
        done = _with_progress(read, lambda advance: store_documents.write_documents(target, read(), embedder,
                                                                    settings.store.collection, progress=advance))
        stale = f", {done.stale} stale chunks of their documents removed" if done.stale else ""
        console.print(f"{target.name} collection {settings.store.collection!r}: wrote {done.written} passages{stale}, "
                      f"{target.count()} held ({embedder_identity(embedder)}, {embedder.dimension}-d)")
    finally:
        target.close()


def _sync_store(target: VectorStore, folder: Path, settings: Settings, embedder: TextEmbedder) -> None:
    """``--sync`` into a store: the plan read from the collection, the changed files written, the deleted removed."""
    chunks = _folder_chunks(folder, settings)

    def read(files: list[Path]) -> Iterator[Passage]:
        return chunks(read_folder_files(folder, files))

    with warnings_once():
        plan, done, gone = store_documents.sync_store(target, folder, read, embedder, settings.store.collection)
    console.print(f"{plan.summary()}: wrote {done.written} passages, removed {done.stale + gone}; "
                  f"{target.count()} held")


def _with_progress(read: Callable[[], Iterator[Passage]], write: Callable[[Callable[[int], None]], T]) -> T:
    """Run ``write`` with progress over the corpus: a counting pass first (cheap, no model; a bad corpus is
    refused before any embedding) gives the total; ``write`` reports each batch it has read. A bad file or line is
    warned about once, however many passes read it."""
    with warnings_once():
        total = sum(1 for _ in read())
        with rate_progress("indexing", "passages", total=total) as advance:
            return write(advance)


def embedder_factory(settings: Settings) -> EmbedderFactory:
    """What each Ray actor builds its embedder with: the configured model, without the embedding cache (each shard
    is embedded once, and the shards folder is what a rerun reuses)."""
    return functools.partial(Embedder, settings.embedding)


def _index_on_ray(out: Path, corpus: Path, settings: Settings, address: str | None, actors: int,
                  shards: Path | None) -> None:
    """Plan the shards (one pass over the file), embed the missing ones on Ray with a progress bar over documents
    (rate and ETA), then build the index here from the shards, in order."""
    folder = shards or out.with_name(out.name + ".shards")
    plan = plan_shards(corpus, settings.index, settings.embedding.model)
    todo = open_shards(folder, plan)
    console.print(f"{corpus}: {plan.documents:,} documents in {len(plan.shards)} shard(s), {len(todo)} to embed "
                  f"({folder})")
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TextColumn("documents"),
               TextColumn("{task.fields[rate]} passages/s"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("embed", total=plan.documents, rate="-")
        began, embedded = time.perf_counter(), 0

        def advance(documents: int, passages: int) -> None:
            nonlocal embedded
            embedded += passages
            bar.advance(task, documents)
            bar.update(task, rate=f"{embedded / (time.perf_counter() - began):,.0f}" if embedded else "-")

        embed_shards(plan, folder, embedder_factory(settings), actors=actors, address=address,
                     tiers=authority_tiers(settings), progress=advance)
    with Progress(TextColumn("building"), TextColumn("{task.completed:,.0f} passages"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("build", total=None)
        manifest = build_from_shards(out, folder, settings.index, progress=lambda n: bar.advance(task, n))
    console.print(f"embedding shards kept in {folder} (a rebuild with other index settings reuses them; remove the "
                  "folder when done)")
    _manifest_line(out, manifest)


def _folder_chunks(folder: Path, settings: Settings) -> Callable[[Iterator[Passage]], Iterator[Passage]]:
    """How ``--sync`` chunks a folder's documents, into an index or a store alike: the index settings' sizes, and
    authorities read with the tiers in force."""
    tiers = authority_tiers(settings)

    def chunks(documents: Iterator[Passage]) -> Iterator[Passage]:
        return stream_chunks(documents, str(folder), chunk_size=settings.index.chunk_words,
                             chunk_overlap=settings.index.chunk_overlap, tiers=tiers,
                             min_chunk_words=settings.index.min_chunk_words)

    return chunks


def _sync(out: Path, folder: Path, settings: Settings, index_type: str | None, bm25: bool) -> None:
    """``--sync``: one line with what the folder holds against the index, then progress over the new and changed
    files' passages only (their count, from the sync's own reading pass, gives the time left)."""
    embedder = Runtime(settings).embedder
    chunks = _folder_chunks(folder, settings)

    def keeps_settings(existing: PassageIndex) -> None:
        if index_type and index_type != existing.config.index_type or bm25 and existing.bm25 is None:
            raise InputError(f"{out} is a {existing.config.index_type} index; --sync keeps its settings: drop "
                             "--index-type/--bm25, or rebuild without --sync")

    with rate_progress("indexing", "passages") as progress:
        def planned(plan: SyncPlan) -> int:
            console.print(f"sync {folder}: {plan.summary()}")
            return 0

        idx, plan, changes = sync_folder(out, folder, embedder, settings.index, chunks=chunks, progress=progress,
                                         expect=progress.expect, on_plan=planned, check=keeps_settings)
    if idx is None:
        console.print(f"index {out} already holds the folder as it is: nothing written")
        return
    console.print(f"synced: {changes.added} passages embedded, {changes.removed} removed ({len(plan.new)} new, "
                  f"{len(changes.replaced)} changed and {len(plan.deleted)} deleted files)")
    _summary(out, idx)


def _remove(out: Path, ids: str, corpus: Path | None, embedder: TextEmbedder) -> None:
    doc_ids = [i.strip() for i in ids.split(",") if i.strip()]
    if corpus is not None or not doc_ids:
        raise InputError("--remove takes comma-separated document ids and no corpus")
    idx, changes = remove_documents(out, doc_ids, embedder)
    console.print(f"removed {len(doc_ids)} document(s): {changes.removed} passages")
    _summary(out, idx)


def _summary(out: Path, idx: PassageIndex) -> None:
    _manifest_line(out, idx.manifest())


def _manifest_line(out: Path, m: IndexManifest) -> None:
    console.print(f"index {out}: {m.count} passages, {m.index_type}{' + bm25' if m.bm25 else ''}, "
                  f"{m.embedding_model} ({m.dimension}-d)")
