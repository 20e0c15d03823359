"""Read corpora into Passages: JSONL records or folders of .txt/.md files, with chunking."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from tanglerag.errors import IngestError
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


def _chunked(passage: Passage, size: int, overlap: int) -> Iterator[Passage]:
    pieces = chunk_words(passage.text, size, overlap)
    if len(pieces) == 1:
        yield passage
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
    if not text.strip():
        raise IngestError(f"{name}: empty file")
    base = name.rsplit("/", 1)[-1]
    return Passage(id=record_id(doc_id or base), title=base.rsplit(".", 1)[0].replace("_", " "), text=text,
                   metadata={"path": doc_id or base})


def chunk_passages(passages: Iterable[Passage], source: str, *, chunk_size: int = 200,
                   chunk_overlap: int = 40) -> list[Passage]:
    """Chunk long passages; refuse an empty result or a repeated id (naming ``source``)."""
    return list(stream_chunks(passages, source, chunk_size=chunk_size, chunk_overlap=chunk_overlap))


def stream_chunks(passages: Iterable[Passage], source: str, *, chunk_size: int = 200,
                  chunk_overlap: int = 40) -> Iterator[Passage]:
    """``chunk_passages`` as a stream: a repeated id stops it when met; an empty corpus once it ends. A document
    whose id has a chunk's shape (``x#1``) is an ordinary document, but no passage id may be held twice: chunk 1
    of a long ``x`` and a document ``x#1`` in one corpus are refused, naming both."""
    owner: dict[str, str] = {}
    for passage in passages:
        for chunk in _chunked(passage, chunk_size, chunk_overlap):
            if chunk.id in owner:
                raise IngestError(f"corpus {source}: duplicate passage id {chunk.id!r}" + (
                    "" if owner[chunk.id] == passage.id else
                    f" (a passage of document {passage.id!r} and of document {owner[chunk.id]!r})"))
            owner[chunk.id] = passage.id
            yield chunk
    if not owner:
        raise IngestError(f"corpus {source} holds no passages")


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"


def read_text_folder(folder: Path) -> Iterator[Passage]:
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in {".txt", ".md"} and p.is_file())
    for file in files:
        raw = file.read_bytes()
        if b"\x00" in raw[:8192]:
            log.warning("skipping %s: it looks binary, not text", file)
            continue
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            log.warning("skipping empty file %s", file)
            continue
        rel = file.relative_to(folder).as_posix()
        yield Passage(id=rel, title=file.stem.replace("_", " "), text=text, metadata={"path": rel})


def load_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40, skip_bad: bool = False) -> list[Passage]:
    """Load and chunk a corpus; raise IngestError if it holds nothing."""
    return list(stream_corpus(source, chunk_size=chunk_size, chunk_overlap=chunk_overlap, skip_bad=skip_bad))


def stream_corpus(source: Path, *, chunk_size: int = 200, chunk_overlap: int = 40,
                  skip_bad: bool = False) -> Iterator[Passage]:
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
    return stream_chunks(raw, str(source), chunk_size=chunk_size, chunk_overlap=chunk_overlap)
