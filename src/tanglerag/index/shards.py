"""A corpus cut into shards that are embedded apart (by Ray actors, ``index.ray_ingest``) and built into an index.

Embedding is the work that grows with the corpus, so it is what runs on a cluster; reading, chunking and building
stay as the local path does them. A shard is a fixed piece of the corpus file, fixed by the plan before anything is
embedded: a range of lines of a JSONL or DPR TSV file (byte offsets, so a worker seeks to it and reads only it), or
a row group of a Parquet file. Each is read, chunked and checked exactly as ``stream_corpus`` reads the whole file,
so the passages, their order and their vectors are those of the local path.

A finished shard is two files in the shards folder: its passages (a passage store of their own, so the build copies
them inside SQLite without making a Python object of each) and then its vectors (``.npy``), each written under a
temporary name and renamed, so a shard whose two files exist is complete and a killed job redoes only the shards that
are missing (shards an older release wrote as JSON lines count as missing, and are embedded again). ``plan.json``
names the corpus (path, size, modification time), the chunking and the model; shards made for another plan are
refused, never mixed in. ``embedder.txt`` names the embedder whose vectors they hold (``embeddings.embedder_identity``:
two backends of one model make different vectors), and the index built from them records it.
``index.shard_build`` builds the index from them.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ValidationError

from tanglerag.config import IndexConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.dpr import check_header, dpr_rows
from tanglerag.errors import IndexStoreError, IngestError
from tanglerag.fileio import atomic_write_npy, atomic_write_text, reporting_disk_full
from tanglerag.index.passage_store import PassageStore, StoreDamaged
from tanglerag.ingest import parse_jsonl_lines, record_passage, stream_chunks
from tanglerag.types import Passage

Format = Literal["jsonl", "tsv", "parquet"]
DOCUMENTS_PER_SHARD = 50_000
"""Corpus records a shard holds (a Parquet file's shards are its row groups): about 10 minutes of MiniLM on one
GPU, so a killed job loses little and a cluster has many shards to share out."""
PLAN = "plan.json"
EMBEDDER = "embedder.txt"


class Shard(BaseModel):
    """``start``/``end``: byte offsets of its lines (jsonl, tsv) or its row group and the next (parquet); ``first``:
    the line number of its first line (rows: its first row, from 0); ``documents``: the records it holds."""

    start: int
    end: int
    first: int
    documents: int


class ShardPlan(BaseModel):
    """What the shards are made of: a shards folder serves only the plan it was made for."""

    corpus: str
    format: Format
    size: int
    mtime_ns: int
    chunk_words: int
    chunk_overlap: int
    model: str
    shards: list[Shard]

    @property
    def documents(self) -> int:
        return sum(shard.documents for shard in self.shards)


def corpus_format(corpus: Path) -> Format:
    """The shardable format of a corpus file by its extension; anything else is one line saying what is."""
    suffix = corpus.suffix.lower()
    if suffix in {".jsonl", ".json"}:
        return "jsonl"
    if suffix in {".tsv", ".parquet"}:
        return "tsv" if suffix == ".tsv" else "parquet"
    raise IngestError(f"--engine ray reads a .jsonl, .parquet or DPR .tsv corpus file, not {corpus.name}")


def plan_shards(corpus: Path, config: IndexConfig, model: str, *,
                documents_per_shard: int = DOCUMENTS_PER_SHARD) -> ShardPlan:
    """Cut ``corpus`` into shards of ``documents_per_shard`` lines (one pass over the file, reading no record) or
    into its Parquet row groups."""
    if not corpus.is_file():
        raise IngestError(f"corpus not found: {corpus}")
    if documents_per_shard < 1:
        raise IngestError("documents per shard must be at least 1")
    fmt = corpus_format(corpus)
    stat = corpus.stat()
    shards = _row_groups(corpus) if fmt == "parquet" else _line_ranges(corpus, fmt, documents_per_shard)
    if not any(shard.documents for shard in shards):
        raise IngestError(f"corpus {corpus} holds no passages")
    return ShardPlan(corpus=str(corpus.resolve()), format=fmt, size=stat.st_size, mtime_ns=stat.st_mtime_ns,
                     chunk_words=config.chunk_words, chunk_overlap=config.chunk_overlap, model=model, shards=shards)


def _line_ranges(corpus: Path, fmt: Format, per_shard: int) -> list[Shard]:
    shards: list[Shard] = []
    with corpus.open("rb") as fh:
        first_line = 1
        if fmt == "tsv":
            header = fh.readline()
            try:
                check_header(header.decode("utf-8"), corpus)
            except UnicodeDecodeError:
                raise IngestError(f"{corpus}:1: not UTF-8 text") from None
            first_line = 2
        start, lines, line_no = fh.tell(), 0, first_line
        offset = start
        for line in fh:
            offset += len(line)
            lines += 1
            if lines == per_shard:
                shards.append(Shard(start=start, end=offset, first=line_no, documents=lines))
                start, line_no, lines = offset, line_no + lines, 0
        if lines:
            shards.append(Shard(start=start, end=offset, first=line_no, documents=lines))
    return shards


def _row_groups(corpus: Path) -> list[Shard]:
    metadata = _parquet_file(corpus).metadata
    shards, first = [], 0
    for group in range(metadata.num_row_groups):
        rows = metadata.row_group(group).num_rows
        shards.append(Shard(start=group, end=group + 1, first=first, documents=rows))
        first += rows
    return shards


def _parquet_file(corpus: Path) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise IngestError("reading Parquet needs pyarrow: pip install 'tanglerag[ray]'") from None
    try:
        return pq.ParquetFile(corpus)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and OSErrors for a file it cannot read
        raise IngestError(f"{corpus}: not a Parquet file ({exc})") from None


def shard_passages(plan: ShardPlan, number: int,
                   tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> list[Passage]:
    """Shard ``number``'s passages, chunked and checked as ``stream_corpus`` does (a repeated id inside the shard is
    refused here; one across shards when the shards are built)."""
    shard, corpus = plan.shards[number], Path(plan.corpus)
    if plan.format == "parquet":
        table = _parquet_file(corpus).read_row_group(shard.start)
        raw: Iterable[Passage] = _rows(table.to_pylist(), str(corpus), shard.first)
    else:
        with corpus.open("rb") as fh:
            fh.seek(shard.start)
            data = fh.read(shard.end - shard.start)
        if plan.format == "jsonl":
            raw = parse_jsonl_lines(data.splitlines(), str(corpus), first_line=shard.first)
        else:
            raw = dpr_rows(io.StringIO(data.decode("utf-8", errors="strict"), newline=""), str(corpus),
                           first_line=shard.first)
    try:
        documents = list(raw)
        if not documents:
            return []  # a shard of blank lines: the plan already refused a corpus of nothing
        return list(stream_chunks(documents, str(corpus), chunk_size=plan.chunk_words,
                                  chunk_overlap=plan.chunk_overlap, tiers=tiers))
    except UnicodeDecodeError:
        raise IngestError(f"{corpus}: lines {shard.first}-{shard.first + shard.documents - 1}: not UTF-8 text") from None


def _rows(rows: list[dict[str, object]], source: str, first: int) -> Iterator[Passage]:
    for number, row in enumerate(rows, first):
        try:
            yield record_passage({key: value for key, value in row.items() if value is not None})
        except (ValueError, ValidationError) as exc:
            raise IngestError(f"{source}: row {number}: {exc}") from None


# -- the shards folder ------------------------------------------------------------------


def _stem(folder: Path, number: int) -> Path:
    return folder / f"shard-{number:06d}"


PASSAGES = ".sqlite3"
VECTORS = ".npy"


def shard_file(folder: Path, number: int, suffix: str) -> Path:
    """Shard ``number``'s passages (``PASSAGES``) or vectors (``VECTORS``) file."""
    return _stem(folder, number).with_suffix(suffix)


def shard_done(folder: Path, number: int) -> bool:
    """Whether shard ``number`` is complete (its passages, then its vectors, are there)."""
    return all(shard_file(folder, number, suffix).exists() for suffix in (PASSAGES, VECTORS))


def write_shard(folder: Path, number: int, passages: list[Passage], vectors: np.ndarray) -> None:
    """Passages first, vectors last, each renamed into place: a shard with vectors is whole. The passages' store is
    written by the worker that embedded them, which takes that work off the one process that builds the index."""
    if len(passages) != len(vectors):
        raise IndexStoreError(f"shard {number}: {len(vectors)} vectors for {len(passages)} passages")
    target = shard_file(folder, number, PASSAGES)
    with reporting_disk_full(folder), tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=folder) as work:
        written = Path(work) / target.name
        PassageStore.write(written, passages)
        with written.open("rb") as fh:
            os.fsync(fh.fileno())
        os.replace(written, target)
    atomic_write_npy(shard_file(folder, number, VECTORS), vectors)


def damaged_shard(path: Path, reason: str) -> IndexStoreError:
    """What a shard file that cannot be read is mended by: embedding its shard again."""
    return IndexStoreError(f"{path} is missing or damaged ({reason}); remove the shard's files "
                           f"({path.name.split('.')[0]}.*) and run the command again")


@contextmanager
def shard_damage() -> Iterator[None]:
    """A shard's store SQLite cannot read is mended by embedding the shard again, not by what ``StoreDamaged`` says
    of an index's store (``tanglerag index CORPUS --out`` the shards folder)."""
    try:
        yield
    except StoreDamaged as exc:
        raise damaged_shard(exc.path, exc.reason) from exc


def shard_vectors(file: Path, mmap_mode: Literal["r"] | None = "r") -> np.ndarray:
    """A shard's vectors, mapped (or read); a file numpy cannot take (cut short, not an array) is the shard's damage,
    said in one line like a damaged store's, not a traceback."""
    try:
        vectors: np.ndarray = np.load(file, mmap_mode=mmap_mode)
    except (ValueError, OSError) as exc:
        raise damaged_shard(file, str(exc)) from exc
    if vectors.ndim != 2:
        raise damaged_shard(file, f"an array of {vectors.ndim} dimension(s), not rows of vectors")
    return vectors


def read_shard(folder: Path, number: int) -> tuple[list[Passage], np.ndarray]:
    """A finished shard's passages, in order, and their vectors."""
    with shard_damage():
        store = PassageStore(shard_file(folder, number, PASSAGES))
        try:
            passages = list(store)
        finally:
            store.close()
    vectors = shard_vectors(shard_file(folder, number, VECTORS), mmap_mode=None)
    if len(passages) != len(vectors):
        raise IndexStoreError(f"{_stem(folder, number)}: {len(vectors)} vectors for {len(passages)} passages; remove "
                              "the shard's files and run the command again")
    return passages, vectors


def open_shards(folder: Path, plan: ShardPlan) -> list[int]:
    """Make ``folder`` serve ``plan`` (write the plan, or check the one there) and return the shards still to embed.
    A folder made for another corpus, chunking or model is refused, naming what differs."""
    path = folder / PLAN
    if path.exists():
        try:
            held = ShardPlan.model_validate_json(path.read_bytes())
        except ValidationError:
            raise IngestError(f"{path} cannot be read; remove {folder} to embed the corpus again") from None
        differs = [name for name in ("corpus", "size", "mtime_ns", "chunk_words", "chunk_overlap", "model", "shards")
                   if getattr(held, name) != getattr(plan, name)]
        if differs:
            raise IngestError(f"shards in {folder} were made for another {', '.join(differs)}; remove the folder or "
                              "give another --shards folder")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, plan.model_dump_json(indent=2))
    return [number for number in range(len(plan.shards)) if not shard_done(folder, number)]


def record_embedder(folder: Path, plan: ShardPlan, identity: str) -> None:
    """Record that ``identity`` embeds the shards of ``folder``, refusing it where shards of another embedder are."""
    path = folder / EMBEDDER
    if path.exists() or any(shard_done(folder, number) for number in range(len(plan.shards))):
        held = shards_embedder(folder, plan)
        if held != identity:
            raise IngestError(f"shards in {folder} were embedded by {held!r}, not the configured {identity!r}; remove "
                              "the folder or give another --shards folder")
    if not path.exists():
        atomic_write_text(path, identity)


def shards_embedder(folder: Path, plan: ShardPlan) -> str:
    """The identity of the embedder of the shards in ``folder``; for shards from before it was recorded, the plan's
    model name (they were embedded by sentence-transformers, whose identity that is)."""
    path = folder / EMBEDDER
    return path.read_text(encoding="utf-8").strip() if path.exists() else plan.model


def read_plan(folder: Path) -> ShardPlan:
    return ShardPlan.model_validate_json((folder / PLAN).read_bytes())
