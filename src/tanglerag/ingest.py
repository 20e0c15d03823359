"""Read corpora into Passages: JSONL records, the DPR Wikipedia passages TSV (``tanglerag.dpr``), or files (text,
Markdown, PDF, HTML, Word: ``tanglerag.loaders``) one at a time or a folder of them, with chunking that follows each
file's structure.

A document's provenance rides in its passages' ``metadata``: a JSONL record's ``date``, ``source``, ``authority`` and
``meta`` fields (like any extra field), a Markdown file's YAML front matter, or what a file declares itself (a PDF's
creation date and author, a page's date and canonical address), which never overrides what a person wrote. A file's
chunks also carry its ``path``, the ``sha256`` of its bytes, and their ``page`` (and ``pages`` when a chunk spans
two) and ``section`` path (``tanglerag.provenance``); ``loaders.chunking`` says where a file's chunks are cut. Every
passage is checked with ``DocumentMeta.from_metadata`` on its way to chunking, so an unreadable date or an unknown
authority tier is refused in one line naming the document and the field before anything is embedded or stored; a
named tier is stored as written and mapped to its number when read, so changing what a tier is worth needs no new
index.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from tanglerag.config import IndexConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS, DocumentMeta
from tanglerag.dating import date_fields, name_date, text_date_fields
from tanglerag.dpr import read_dpr_tsv
from tanglerag.errors import IngestError, InputError
from tanglerag.jsonio import loads as json_loads
from tanglerag.loaders import LOADERS, Segment, UnreadableFile, extension, loader_for
from tanglerag.loaders.chunking import Chunk, chunk_words, placed_chunks
from tanglerag.loaders.folder import folder_files, printable_name, read_regular, refusal
from tanglerag.loaders.front_matter import json_ready, split_front_matter
from tanglerag.provenance import PAGE, PAGES, PATH, SECTION, SECTIONS, SHA256
from tanglerag.types import Passage, record_id

__all__ = ["SourceDocument", "chunk_passages", "chunk_words", "file_document", "folder_files", "json_ready",
           "load_corpus", "passages_from_upload", "record_passage", "split_front_matter", "stream_chunks",
           "stream_corpus"]

log = logging.getLogger(__name__)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
MIN_CHUNK_WORDS: int = IndexConfig.model_fields["min_chunk_words"].default
"""The fewest words a chunk of a file with pages or sections has (``index.min_chunk_words``), unless its document
has nothing else (``loaders.chunking``)."""


@contextmanager
def warnings_once() -> Iterator[None]:
    """While open, each of this module's warnings (a skipped file, malformed lines) is logged once: a corpus is read
    in several passes (a progress bar's count, an add's plan, the write), and a bad file must be one line, not one a
    pass."""
    said: set[str] = set()

    def first_time(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in said:
            return False
        said.add(message)
        return True

    log.addFilter(first_time)
    try:
        yield
    finally:
        log.removeFilter(first_time)


CHUNK_MARKS = ("source_id", "chunk")
"""Metadata keys that mark a passage as a chunk of a longer document; only chunking sets them, so a record that
brings its own (an export of chunks) cannot pass for a chunk of another document."""


class SourceDocument(Passage):
    """A document read from a file, with the pieces its structure draws (pages, sections): its ``text`` is theirs
    joined, and chunking cuts inside each piece, never across two."""

    segments: list[Segment] = Field(default_factory=list)

    def placed(self) -> bool:
        """Whether its pieces say where they stand (else it is chunked as plain text, as before loaders)."""
        return len(self.segments) > 1 or any(s.page is not None or s.section for s in self.segments)


def _chunked(passage: Passage, size: int, overlap: int, min_words: int) -> Iterator[Passage]:
    if isinstance(passage, SourceDocument):
        if passage.placed():
            yield from _placed_chunks(passage, size, overlap, min_words)
            return
        passage = Passage(id=passage.id, title=passage.title, text=passage.text, metadata=passage.metadata)
    pieces = chunk_words(passage.text, size, overlap)
    if len(pieces) == 1:
        own = {key: value for key, value in passage.metadata.items() if key not in CHUNK_MARKS}
        yield passage if own == passage.metadata else passage.model_copy(update={"metadata": own})
        return
    for i, piece in enumerate(pieces):
        yield Passage(id=f"{passage.id}#{i}", title=passage.title, text=piece,
                      metadata={**passage.metadata, "source_id": passage.id, "chunk": i})


def _placed_chunks(document: SourceDocument, size: int, overlap: int, min_words: int) -> Iterator[Passage]:
    """The document's chunks as ``loaders.chunking`` cuts its pieces, each carrying its page(s) and section path.
    A document of one chunk keeps its own id."""
    own = {key: value for key, value in document.metadata.items() if key not in CHUNK_MARKS}
    chunks = placed_chunks(document.segments, size, overlap, min_words)
    for i, chunk in enumerate(chunks):
        if len(chunks) == 1:
            yield Passage(id=document.id, title=document.title, text=chunk.text, metadata={**own, **_place(chunk)})
        else:
            yield Passage(id=f"{document.id}#{i}", title=document.title, text=chunk.text,
                          metadata={**own, **_place(chunk), "source_id": document.id, "chunk": i})


def _place(chunk: Chunk) -> dict[str, Any]:
    """A chunk's page (its first), its pages when it spans more than one, its section path, and every section path
    when it joins several, as metadata."""
    pages = list(chunk.pages)
    return {**({PAGE: pages[0]} if pages else {}), **({PAGES: pages} if len(pages) > 1 else {}),
            **({SECTION: list(chunk.section)} if chunk.section else {}),
            **({SECTIONS: [list(s) for s in chunk.sections]} if len(chunk.sections) > 1 else {})}


def _record_passage(line: bytes) -> Passage:
    """One JSONL line as a Passage; ValueError says what is wrong with it."""
    return record_passage(json_loads(line.decode("utf-8")))


def record_passage(record: Any) -> Passage:
    """One corpus record (a JSONL line's object, a Parquet row) as a Passage; ValueError says what is wrong."""
    if not isinstance(record, dict):
        raise ValueError("record is not a JSON object")
    for field in ("id", "text"):
        if field not in record:
            raise ValueError(f"missing field {field!r}")
    if (bad := _not_text(record)) is not None:
        raise ValueError(f"field {bad!r} holds a lone surrogate (half of a UTF-16 escape pair such as \\ud800), "
                         "which is not Unicode text: fix the escape, or drop the line")
    passage_id = record_id(record["id"])
    if not isinstance(record["text"], str):
        raise ValueError(f"'text' must be a string, got {type(record['text']).__name__}")
    if not isinstance(record.get("title") or "", str):
        raise ValueError("'title' must be a string")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("'metadata' must be an object")
    extra = {k: v for k, v in record.items() if k not in {"id", "title", "text", "metadata"}}
    twice = next((key for key, value in extra.items() if key in metadata and metadata[key] != value), None)
    if twice is not None:  # neither is plainly the one meant: a silent winner would date or rank it wrongly
        raise ValueError(f"field {twice!r} is given twice, at the top level and in 'metadata', with different "
                         "values; give it once")
    return Passage(id=passage_id, title=record.get("title") or "", text=record["text"], metadata={**metadata, **extra})


def _not_text(value: Any, path: str = "") -> str | None:
    """The path of the first string in a decoded record that is not Unicode text (JSON's ``\\ud800`` decodes to a
    lone surrogate, which no UTF-8 writer, SQLite or embedder takes), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "(the record)"
        return None
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        if isinstance(key, str) and _not_text(key) is not None:
            return f"{path}.{key!r}" if path else repr(key)
        if (found := _not_text(child, f"{path}.{key}" if path else str(key))) is not None:
            return found
    return None


def read_jsonl_passages(path: Path, *, skip_bad: bool = False) -> Iterator[Passage]:
    """Records need ``id`` and ``text``; ``title`` is optional; other fields go to metadata.

    A malformed line is an error naming file and line; with ``skip_bad`` it is skipped and counted.
    """
    with path.open("rb") as fh:
        yield from parse_jsonl_lines(fh, str(path), skip_bad=skip_bad)


def parse_jsonl_lines(lines: Iterable[bytes], source: str, *, skip_bad: bool = False,
                      first_line: int = 1) -> Iterator[Passage]:
    """JSONL passage records from any byte lines (a file, an uploaded body, a shard of a file whose first line is
    ``first_line``); errors name ``source:line``."""
    skipped = 0
    for line_no, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            yield _record_passage(line)
        except (ValueError, ValidationError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            reason = _first_error(exc) if isinstance(exc, ValidationError) else (
                "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc))
            message = f"{source}:{line_no}: {reason}"
            if not skip_bad:
                raise IngestError(message) from exc
            skipped += 1
            log.warning("skipping %s", message)
    if skipped:
        log.warning("%s: skipped %d malformed line(s)", source, skipped)


def passages_from_upload(name: str, data: bytes) -> list[Passage]:
    """An uploaded file's passages: JSONL records, or one document of a type a loader reads (text, Markdown, PDF,
    HTML, Word) whose id is the path the client sent (``guides/notes.md``, as a folder ingested by the CLI names its
    files), so files of one name in two folders do not collide; the path is only an id and never reaches the
    filesystem. A file that cannot be read is refused in one line naming it and the reason."""
    path = upload_path(name)
    base = path.rsplit("/", 1)[-1]
    suffix = extension(base)
    if suffix in {"jsonl", "json", ""}:
        return list(parse_jsonl_lines(data.splitlines(), base or "body"))
    if loader_for(base) is not None:
        return [file_document(path, data, doc_id=path)]
    raise IngestError(f"{base}: unsupported file type; upload {supported_types()} or .jsonl")


def supported_types() -> str:
    """The file types loaders read, as a message lists them (``.docx, .htm, ...``)."""
    return ", ".join(f".{name}" for name in sorted(LOADERS.names()))


def upload_path(name: str) -> str:
    """A client's file name as a clean relative path: forward slashes, no leading '/', no '.' or '..' parts."""
    parts = [part for part in name.replace("\\", "/").split("/") if part not in {"", ".", ".."}]
    return "/".join(parts)


def file_document(name: str, data: bytes, *, doc_id: str | None = None) -> SourceDocument:
    """One file given on its own (or uploaded) as a document: a file its loader cannot read (binary, not UTF-8,
    encrypted, damaged, no text) is an ``UnreadableFile`` naming it, an empty one an ``IngestError`` (a folder skips
    both with a warning). Its id is ``doc_id``, else the file's name."""
    base = name.rsplit("/", 1)[-1]
    document = _file_document(record_id(doc_id or base), base, data, name)
    if document is None:
        raise UnreadableFile(f"{name}: empty file" if not data.strip() else f"{name}: no text after its front matter")
    return document


def _file_document(doc_id: str, file_name: str, data: bytes, shown: str) -> SourceDocument | None:
    """A file as a document titled as it says (front matter, the file's own title, its first heading) or after its
    name, its ``path`` and ``sha256`` in ``metadata`` beside the fields its front matter gives and those the file
    declares (which never override a person's). None when no text is left."""
    loader = loader_for(file_name)
    if loader is None:
        raise IngestError(f"{shown}: unsupported file type; give {supported_types()} or .jsonl")
    loaded = loader(shown, data)
    fields: dict[str, Any] = dict(loaded.explicit)
    title = fields.pop("title", None)
    if title is not None and not isinstance(title, str):
        raise IngestError(f"{doc_id}: front matter field 'title': expected text, got {title!r}")
    text = loaded.text()
    if not text.strip():
        return None
    detected = _detected_fields(loaded.detected)
    if "date" not in detected and "date" not in fields:  # the file's own words, read whole: its chunks share it
        detected.update(text_date_fields(text))
    if "date" not in detected and "date" not in fields and (named := name_date(file_name)) is not None:
        detected.update(date_fields(*named, "name"))  # else its name: "minutes-2023-05-04.md"
    metadata = {**detected, **fields, PATH: doc_id, SHA256: hashlib.sha256(data).hexdigest()}
    return SourceDocument(id=doc_id, title=title or loaded.title or _name_title(file_name), text=text,
                          metadata=metadata, segments=loaded.segments)


def _name_title(file_name: str) -> str:
    """The title a file's name gives it: its stem, with '_' and control characters (a newline or tab in the name)
    as spaces, so that a title is one line wherever it is shown (a prompt's source list, a citation)."""
    return _CONTROL.sub(" ", file_name.rsplit(".", 1)[0].replace("_", " "))


def _detected_fields(detected: Mapping[str, str]) -> dict[str, str]:
    """What a file declares, as metadata: its date, its author, its address, the legacy encoding it was read in, and
    as ``source`` the address (else the author), which the conflict policies count witnesses by."""
    fields = {key: detected[key] for key in ("date", "author", "url", "encoding") if detected.get(key)}
    source = detected.get("url") or detected.get("author")
    return {**fields, "source": source} if source else fields


def chunk_passages(passages: Iterable[Passage], source: str, *, chunk_size: int = 200, chunk_overlap: int = 40,
                   tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS,
                   min_chunk_words: int = MIN_CHUNK_WORDS) -> list[Passage]:
    """Chunk long passages; refuse an empty result, a repeated id or unreadable metadata (naming ``source``)."""
    return list(stream_chunks(passages, source, chunk_size=chunk_size, chunk_overlap=chunk_overlap, tiers=tiers,
                              min_chunk_words=min_chunk_words))


def stream_chunks(passages: Iterable[Passage], source: str, *, chunk_size: int = 200, chunk_overlap: int = 40,
                  tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS,
                  min_chunk_words: int = MIN_CHUNK_WORDS) -> Iterator[Passage]:
    """``chunk_passages`` as a stream: a repeated id stops it when met; an empty corpus once it ends. A document
    whose id has a chunk's shape (``x#1``) is an ordinary document, but no passage id may be held twice: chunk 1
    of a long ``x`` and a document ``x#1`` in one corpus are refused, naming both. Each document's metadata is
    checked first (``tiers``: the authority tier names it may use), and every chunk carries it. A file's pieces
    are cut as ``loaders.chunking`` says (``min_chunk_words``: 0 cuts each piece alone); other passages in
    windows of ``chunk_size`` words."""
    owner: dict[str, str] = {}
    for passage in passages:
        for chunk in _chunked(checked_metadata(passage, source, tiers), chunk_size, chunk_overlap, min_chunk_words):
            if chunk.id in owner:
                raise IngestError(f"corpus {source}: duplicate passage id {chunk.id!r}" + (
                    "" if owner[chunk.id] == passage.id else
                    f" (a passage of document {passage.id!r} and of document {owner[chunk.id]!r})"))
            owner[chunk.id] = passage.id
            yield chunk
    if not owner:
        raise IngestError(f"corpus {source} holds no passages")


def checked_metadata(passage: Passage, source: str, tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> Passage:
    """``passage`` once its provenance reads (``DocumentMeta.from_metadata``: a date, a source, a number or a known
    tier) and its metadata is JSON the store can keep; IngestError names ``source``, the document and the field."""
    try:
        DocumentMeta.from_metadata(passage.metadata, tiers)
        ready = json_ready(passage.metadata)
    except (InputError, ValueError) as exc:
        raise IngestError(f"{source}: document {passage.id!r}: {exc}") from None
    return passage if ready == passage.metadata else passage.model_copy(update={"metadata": ready})


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"


def read_folder(folder: Path) -> Iterator[Passage]:
    """Each file under ``folder`` of a type a loader reads (``loaders.folder.folder_files``: regular files inside
    it), as a document whose id is its relative path. A file that cannot be read (binary, not UTF-8, encrypted,
    damaged, past an ingest bound, no text, front matter or metadata it states wrongly) or is empty is skipped with
    one warning naming it and the reason, and the rest is read."""
    for file in folder_files(folder):
        yield from _folder_document(folder, file)


def read_folder_files(folder: Path, files: Iterable[Path]) -> Iterator[Passage]:
    """These files of ``folder`` as ``read_folder`` reads them (``index --sync`` reads only the changed ones)."""
    for file in files:
        yield from _folder_document(folder, file)


def _folder_document(folder: Path, file: Path) -> Iterator[Passage]:
    """The file as a document, or a warning: every path that reads a folder's files (``index``, ``--sync``) comes
    here, so a file its loader refuses, or whose front matter or metadata cannot be read, is that file's warning,
    never the folder's (a single file given alone is refused in one line). The file is checked again as it
    is read (``refusal``, ``read_regular``): it may have been swapped for a link since it was listed."""
    shown = printable_name(file)
    try:
        why = refusal(folder, file)
        if why is not None:
            raise UnreadableFile(f"{shown}: {why}")
        real = file.resolve()
        if not real.is_relative_to(folder.resolve()):  # swapped for a link out since ``refusal`` looked
            raise UnreadableFile(f"{shown}: a link out of the folder")
        data = read_regular(real, shown)
        document = _file_document(file.relative_to(folder).as_posix(), file.name, data, shown)
    except (UnreadableFile, IngestError) as exc:  # IngestError: front matter or metadata the file states wrongly
        log.warning("skipping %s", exc)
        return
    except OSError as exc:
        log.warning("skipping %s: %s", shown, exc.strerror or exc)
        return
    if document is None:
        log.warning("skipping empty file %s", shown)
        return
    yield document


def load_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40, skip_bad: bool = False,
                tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, min_chunk_words: int = MIN_CHUNK_WORDS
                ) -> list[Passage]:
    """Load and chunk a corpus; raise IngestError if it holds nothing."""
    return list(stream_corpus(source, chunk_size=chunk_size, chunk_overlap=chunk_overlap, skip_bad=skip_bad,
                              tiers=tiers, min_chunk_words=min_chunk_words))


def stream_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40, skip_bad: bool = False,
                  tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, min_chunk_words: int = MIN_CHUNK_WORDS
                  ) -> Iterator[Passage]:
    """The corpus's chunks one by one, read as they are needed (a corpus file need not fit in memory)."""
    if not source.exists():
        raise IngestError(f"corpus not found: {source}")
    if source.is_dir():
        raw: Iterator[Passage] = read_folder(source)
    elif source.suffix.lower() in {".jsonl", ".json"}:
        raw = read_jsonl_passages(source, skip_bad=skip_bad)
    elif source.suffix.lower() == ".tsv":
        raw = read_dpr_tsv(source)
    elif loader_for(source.name) is not None:
        raw = iter([file_document(str(source), read_regular(source.resolve(), printable_name(source)))])
    else:
        raise IngestError(f"unsupported corpus {source}: give a .jsonl file, a DPR passages .tsv, a folder, or a "
                          f"file of type {supported_types()}")
    return stream_chunks(raw, str(source), chunk_size=chunk_size, chunk_overlap=chunk_overlap, tiers=tiers,
                         min_chunk_words=min_chunk_words)
