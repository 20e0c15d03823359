"""``tanglerag index``: build or extend a persistent index of a corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tanglerag.cli.common import ConfigOpt, SetOpt, VerboseOpt, console, load_settings
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.ingest import load_corpus
from tanglerag.runtime import Runtime

app = typer.Typer()


@app.command()
def index(
    corpus: Annotated[Path, typer.Argument(help="JSONL file ({id,title,text}) or folder of .txt/.md")],
    out: Annotated[Path, typer.Option("--out", "-o", help="index folder to create or extend")],
    index_type: Annotated[str | None, typer.Option("--index-type", help="flat | hnsw | ivf")] = None,
    bm25: Annotated[bool, typer.Option("--bm25", help="also build a BM25 index")] = False,
    add: Annotated[bool, typer.Option("--add", help="add to an existing index instead of replacing it")] = False,
    skip_bad: Annotated[bool, typer.Option("--skip-bad-lines", help="warn and skip malformed JSONL lines")] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Build (or extend with --add) a persistent index of a corpus."""
    settings = load_settings(config, set_, verbose, index__index_type=index_type, index__bm25=bm25 or None)
    passages = load_corpus(corpus, chunk_size=settings.index.chunk_words, chunk_overlap=settings.index.chunk_overlap,
                           skip_bad=skip_bad)

    def keeps_settings(existing: PassageIndex) -> None:
        if index_type and index_type != existing.config.index_type or bm25 and existing.bm25 is None:
            raise InputError(f"{out} is a {existing.config.index_type} index"
                             f"{' with BM25' if existing.bm25 else ''}; --add keeps its settings: "
                             "drop --index-type/--bm25, or rebuild without --add")

    idx, added = store_passages(out, passages, Runtime(settings).embedder, settings.index, add=add,
                                show_progress=True, check=keeps_settings)
    if add:
        console.print(f"added {added} new passages ({len(passages) - added} already present)")
    m = idx.manifest()
    console.print(f"index {out}: {m.count} passages, {m.index_type}{' + bm25' if m.bm25 else ''}, "
                  f"{m.embedding_model} ({m.dimension}-d)")
