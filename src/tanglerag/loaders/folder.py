"""Which files of a folder ingest reads, and how it reads one: only regular files whose real place is inside the
folder, each read whole under ``bounds.FILE_BYTES``.

Why: a folder is what its owner put in it. A link in it may lead anywhere the process can read (another user's
notes, ``/proc/self/environ`` with the service's keys), and what ingest reads is indexed and served to whoever asks;
a FIFO would hold the read forever. ``index`` and ``index --sync`` list files here.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from pathlib import Path

from tanglerag.loaders import bounds, extension, loader_for
from tanglerag.loaders.base import UnreadableFile

log = logging.getLogger("tanglerag.ingest")  # its warnings are ingest's: ``ingest.warnings_once`` says each once
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable_name(path: str | Path) -> str:
    """A file's name fit for a one-line message: bytes that are not UTF-8 and control characters (a newline in the
    name) written as escapes."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), text)


def folder_files(folder: Path) -> list[Path]:
    """The files under ``folder`` a loader reads, in path order (hidden files and folders left out), that ingest
    may read (``refusal``); any other with a loader's extension is left out with one warning naming it and why, and
    the files of types no loader reads are named in one warning, by type (a person should not wonder where a file
    went)."""
    files: list[Path] = []
    unread: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or path.is_dir():
            continue
        if loader_for(path.name) is None:
            unread.setdefault(extension(path.name) or "(none)", []).append(printable_name(relative))
            continue
        why = refusal(folder, path)
        if why is None:
            files.append(path)
        else:
            log.warning("skipping %s: %s", printable_name(path), why)
    if unread:
        log.warning("skipping %d file(s) of types no loader reads: %s", sum(map(len, unread.values())),
                    "; ".join(_unread(kind, names) for kind, names in sorted(unread.items())))
    return files


COMPRESSED = frozenset({"gz", "bz2", "xz", "zst", "zip", "tgz", "7z", "rar", "tar"})


def _unread(kind: str, names: list[str]) -> str:
    """``.gz`` (compressed: unpack it first): a.gz, b.gz, and 3 more."""
    label = f".{kind} (compressed: unpack it first)" if kind in COMPRESSED else f".{kind}" if kind != "(none)" \
        else "no extension"
    shown = ", ".join(names[:3]) + (f", and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{label}: {shown}"


def refusal(folder: Path, path: Path) -> str | None:
    """Why ingest must not read ``path`` under ``folder`` (None when it may): its name is not UTF-8 (no document id
    can hold it), it leads out of the folder, it is not a regular file, or it is past the byte bound."""
    try:
        path.relative_to(folder).as_posix().encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8 text; rename it"
    try:
        real = path.resolve(strict=True)
        info = real.stat()
    except (OSError, RuntimeError) as exc:  # a link to nothing, a loop of links
        return "a link to nothing" if path.is_symlink() else getattr(exc, "strerror", None) or str(exc)
    if not real.is_relative_to(folder.resolve()):
        return "a link out of the folder"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a FIFO, socket or device)"
    return _over_size(info.st_size)


def read_regular(path: Path, shown: str) -> bytes:
    """The bytes of the regular file at ``path`` (a real path: no link in it), within the byte bound. The checks are
    made again on the open file, not following a link nor waiting on a FIFO: what was listed may have been swapped
    since. ``shown`` names it in the refusal."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(handle, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise UnreadableFile(f"{shown}: not a regular file (a FIFO, socket or device)")
        data = file.read(bounds.FILE_BYTES + 1)
    over = _over_size(len(data))
    if over is not None:
        raise UnreadableFile(f"{shown}: {over}")
    return data


def _over_size(size: int) -> str | None:
    if size <= bounds.FILE_BYTES:
        return None
    return f"over {bounds.FILE_BYTES // bounds.MB} MB (ingest bound); split it, or give its text as JSONL"
