"""Read corpora into Passages: JSONL records or folders of .txt/.md files, with chunking.

A document's provenance rides in its passages' ``metadata``: a JSONL record's ``date``, ``source``, ``authority`` and
``meta`` fields (like any extra field), or a Markdown file's YAML front matter. Every passage is checked with
``DocumentMeta.from_metadata`` on its way to chunking, so an unreadable date or an unknown authority tier is refused
in one line naming the document and the field before anything is embedded or stored; a named tier is stored as
written and mapped to its number when read, so changing what a tier is worth needs no new index.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS, DocumentMeta
from tanglerag.errors import IngestError, InputError
from tanglerag.jsonio import loads as json_loads
from tanglerag.types import Passage, record_id

log = logging.getLogger(__name__)


def chunk_words(text: str, size: int, overlap: int) -> list[str]:
    """Split on whitespace into windows of ``size`` words that overlap by ``overlap``."""
    if size <= 0:
        raise IngestError("chunk size must be positive")
    if not 0 <= overlap < size:
        raise IngestError("chunk overlap must be >= 0 and smaller than the chunk size")
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    step = size - overlap
    chunks = []
    for start in range(0, len(words), step):
        chunks.append(" ".join(words[start:start + size]))
        if start + size >= len(words):
            break
    return chunks


CHUNK_MARKS = ("source_id", "chunk")
"""Metadata keys that mark a passage as a chunk of a longer document; only chunking sets them, so a record that
brings its own (an export of chunks) cannot pass for a chunk of another document."""


def _chunked(passage: Passage, size: int, overlap: int) -> Iterator[Passage]:
    pieces = chunk_words(passage.text, size, overlap)
    if len(pieces) == 1:
        own = {key: value for key, value in passage.metadata.items() if key not in CHUNK_MARKS}
        yield passage if own == passage.metadata else passage.model_copy(update={"metadata": own})
        return
    for i, piece in enumerate(pieces):
        yield Passage(id=f"{passage.id}#{i}", title=passage.title, text=piece,
                      metadata={**passage.metadata, "source_id": passage.id, "chunk": i})


def _record_passage(line: bytes) -> Passage:
    """One JSONL line as a Passage; ValueError says what is wrong with it."""
    record = json_loads(line.decode("utf-8"))
    if not isinstance(record, dict):
        raise ValueError("record is not a JSON object")
    for field in ("id", "text"):
        if field not in record:
            raise ValueError(f"missing field {field!r}")
    passage_id = record_id(record["id"])
    if not isinstance(record["text"], str):
        raise ValueError(f"'text' must be a string, got {type(record['text']).__name__}")
    if not isinstance(record.get("title") or "", str):
        raise ValueError("'title' must be a string")
    if not isinstance(record.get("metadata") or {}, dict):
        raise ValueError("'metadata' must be an object")
    extra = {k: v for k, v in record.items() if k not in {"id", "title", "text", "metadata"}}
    return Passage(id=passage_id, title=record.get("title") or "", text=record["text"],
                   metadata={**(record.get("metadata") or {}), **extra})


def read_jsonl_passages(path: Path, *, skip_bad: bool = False) -> Iterator[Passage]:
    """Records need ``id`` and ``text``; ``title`` is optional; other fields go to metadata.

    A malformed line is an error naming file and line; with ``skip_bad`` it is skipped and counted.
    """
    with path.open("rb") as fh:
        yield from parse_jsonl_lines(fh, str(path), skip_bad=skip_bad)


def parse_jsonl_lines(lines: Iterable[bytes], source: str, *, skip_bad: bool = False) -> Iterator[Passage]:
    """JSONL passage records from any byte lines (a file, an uploaded body); errors name ``source:line``."""
    skipped = 0
    for line_no, line in enumerate(lines, 1):
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
    """An uploaded file's passages: JSONL records, or one text/markdown document whose id is the path the client
    sent (``guides/notes.md``, as a folder ingested by the CLI names its files), so files of one name in two
    folders do not collide; the path is only an id and never reaches the filesystem."""
    path = upload_path(name)
    base = path.rsplit("/", 1)[-1]
    suffix = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    if suffix in {"jsonl", "json", ""}:
        return list(parse_jsonl_lines(data.splitlines(), base or "body"))
    if suffix in {"txt", "md"}:
        return [text_document(path, data, doc_id=path)]
    raise IngestError(f"{base}: unsupported file type; upload .jsonl, .txt or .md")


def upload_path(name: str) -> str:
    """A client's file name as a clean relative path: forward slashes, no leading '/', no '.' or '..' parts."""
    parts = [part for part in name.replace("\\", "/").split("/") if part not in {"", ".", ".."}]
    return "/".join(parts)


def text_document(name: str, data: bytes, *, doc_id: str | None = None) -> Passage:
    """One text/markdown file given on its own (or uploaded) as a passage: binary, non-UTF-8 or empty is refused,
    naming the file (a folder of files skips such files instead). Its id is ``doc_id``, else the file's name."""
    if b"\x00" in data[:8192]:
        raise IngestError(f"{name}: looks binary, not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{name}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); save it as "
                          "UTF-8") from exc
    base = name.rsplit("/", 1)[-1]
    passage = _file_passage(record_id(doc_id or base), base, text)
    if passage is None:
        raise IngestError(f"{name}: empty file" if not text.strip() else f"{name}: no text after its front matter")
    return passage


def _file_passage(doc_id: str, file_name: str, text: str) -> Passage | None:
    """A file's text as a passage titled after the file, its path in ``metadata``; a Markdown file's front matter
    gives its fields (``title`` the title). None when no text is left."""
    fields: dict[str, Any] = {}
    if file_name.lower().endswith(".md"):
        text, fields = split_front_matter(text, doc_id)
    title = fields.pop("title", None)
    if title is not None and not isinstance(title, str):
        raise IngestError(f"{doc_id}: front matter field 'title': expected text, got {title!r}")
    if not text.strip():
        return None
    return Passage(id=doc_id, title=title or file_name.rsplit(".", 1)[0].replace("_", " "), text=text,
                   metadata={**fields, "path": doc_id})


class _FrontMatterLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """Safe YAML that leaves dates as text, as JSONL gives them: one parser (``conflicts.parse_date``) reads them
    all, and an impossible one (2024-13-01) is refused naming the field instead of failing inside YAML."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)


def split_front_matter(text: str, name: str) -> tuple[str, dict[str, Any]]:
    """A Markdown file's text without its YAML front matter (a first line ``---``, up to a line ``---`` or
    ``...``), and the fields it held, JSON-ready (dates stay text). A file without one is all text; a block that is
    not a YAML mapping is refused, naming the file and the line."""
    found = _FRONT_MATTER.match(text)
    if found is None:
        return text, {}
    try:
        fields = yaml.load(found[1], Loader=_FrontMatterLoader)  # a SafeLoader: plain data only
    except ValueError as exc:  # a value an explicit tag asks for and YAML cannot build (!!timestamp 2024-13-01)
        raise IngestError(f"{name}: front matter is not valid YAML: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 1-based, +1 for the opening '---'
        raise IngestError(f"{name}: front matter is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}"
                          ) from None
    except RecursionError:
        raise IngestError(f"{name}: front matter is nested too deeply") from None
    if fields is not None and not isinstance(fields, dict):
        raise IngestError(f"{name}: front matter must be fields (key: value), not a {type(fields).__name__}")
    try:
        return text[found.end():], json_ready(fields or {})
    except ValueError as exc:
        raise IngestError(f"{name}: front matter {exc}") from None


def json_ready(value: Any, field: str = "") -> Any:
    """``value`` as the passage store keeps metadata (JSON): dates become ISO text, mapping keys text; ValueError
    names the field holding anything else (YAML's binary or set values, Python objects)."""
    if isinstance(value, datetime.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): json_ready(item, f"{field}.{key}" if field else str(key)) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item, field) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError(f"field {field!r}: a {type(value).__name__} is not a value metadata can hold (text, a number, "
                     "true/false, a date, a list or a mapping)")


def chunk_passages(passages: Iterable[Passage], source: str, *, chunk_size: int = 200, chunk_overlap: int = 40,
                   tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> list[Passage]:
    """Chunk long passages; refuse an empty result, a repeated id or unreadable metadata (naming ``source``)."""
    return list(stream_chunks(passages, source, chunk_size=chunk_size, chunk_overlap=chunk_overlap, tiers=tiers))


def stream_chunks(passages: Iterable[Passage], source: str, *, chunk_size: int = 200, chunk_overlap: int = 40,
                  tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> Iterator[Passage]:
    """``chunk_passages`` as a stream: a repeated id stops it when met; an empty corpus once it ends. A document
    whose id has a chunk's shape (``x#1``) is an ordinary document, but no passage id may be held twice: chunk 1
    of a long ``x`` and a document ``x#1`` in one corpus are refused, naming both. Each document's metadata is
    checked first (``tiers``: the authority tier names it may use), and every chunk carries it."""
    owner: dict[str, str] = {}
    for passage in passages:
        for chunk in _chunked(checked_metadata(passage, source, tiers), chunk_size, chunk_overlap):
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


def read_text_folder(folder: Path) -> Iterator[Passage]:
    """Each .txt/.md file under ``folder`` as a document whose id is its relative path; binary and empty files are
    skipped with a warning, a Markdown file's front matter that cannot be read is refused."""
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in {".txt", ".md"} and p.is_file())
    for file in files:
        raw = file.read_bytes()
        if b"\x00" in raw[:8192]:
            log.warning("skipping %s: it looks binary, not text", file)
            continue
        passage = _file_passage(file.relative_to(folder).as_posix(), file.name, raw.decode("utf-8", errors="replace"))
        if passage is None:
            log.warning("skipping empty file %s", file)
            continue
        yield passage


def load_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40, skip_bad: bool = False,
                tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> list[Passage]:
    """Load and chunk a corpus; raise IngestError if it holds nothing."""
    return list(stream_corpus(source, chunk_size=chunk_size, chunk_overlap=chunk_overlap, skip_bad=skip_bad,
                              tiers=tiers))


def stream_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40, skip_bad: bool = False,
                  tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> Iterator[Passage]:
    """The corpus's chunks one by one, read as they are needed (a corpus file need not fit in memory)."""
    if not source.exists():
        raise IngestError(f"corpus not found: {source}")
    if source.is_dir():
        raw: Iterator[Passage] = read_text_folder(source)
    elif source.suffix.lower() in {".jsonl", ".json"}:
        raw = read_jsonl_passages(source, skip_bad=skip_bad)
    elif source.suffix.lower() in {".txt", ".md"}:
        raw = iter([text_document(str(source), source.read_bytes())])
    else:
        raise IngestError(f"unsupported corpus {source}: give a .jsonl file or a folder of .txt/.md files")
    return stream_chunks(raw, str(source), chunk_size=chunk_size, chunk_overlap=chunk_overlap, tiers=tiers)
