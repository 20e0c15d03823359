"""What a caller never sees in an error: a URL, or a path on the server's disk.

Error messages are written for the person at the command line, who owns the machine: they name the index folder,
the damaged file, the LLM server's address. Over HTTP the caller is someone else, so the service keeps the kind of
failure and what to do, and drops where: a URL becomes ``(a URL)`` and a server path its file's bare name
(``/srv/idx/data-3/dense.faiss`` -> ``dense.faiss``). The whole message goes to the server's log, where a URL
keeps its host but not its credentials (``tanglerag.redaction``, the rule for all that leaves the process).

>>> Redactor([Path("idx")])("idx/data-1/dense.faiss is missing; see http://10.0.0.5:8080/v1")  # doctest: +SKIP
'dense.faiss is missing; see (a URL)'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tanglerag.redaction import URL

_END = r"[^\s'\"`:;,()<>\[\]]*"  # the rest of a path: up to a space, quote, bracket or separator
_START = r"(?<![\w.~/-])"  # a path starts a word: not the tail of a name or of another path


class Redactor:
    """Replaces URLs and server paths in a message: absolute paths whose top folder exists on this machine (an API
    route such as ``/v1/ask`` does not), and paths under the folders the server was given (``folders``, which may
    be relative: ``--index idx``)."""

    def __init__(self, folders: Iterable[Path | None] = ()) -> None:
        given = {text for folder in folders if folder is not None
                 for text in (str(folder), str(folder.absolute())) if text not in ("", ".", "/")}
        roots = [re.escape(text) + f"(?:/{_END})?" for text in sorted(given, key=len, reverse=True)]
        self._pattern = re.compile("|".join([f"(?P<url>{URL})", *(f"{_START}{r}" for r in roots),
                                             f"{_START}(?P<absolute>/{_END})"]))

    def __call__(self, message: str) -> str:
        return self._pattern.sub(_replacement, message)


def _replacement(match: re.Match[str]) -> str:
    if match.group("url") is not None:
        return "(a URL)"
    found = match.group()
    path = found.rstrip(".")  # a path that ends a sentence keeps the sentence's full stop
    if match.group("absolute") is not None and not _on_this_machine(path):
        return found
    return (Path(path).name or path) + found[len(path):]


def _on_this_machine(path: str) -> bool:
    """An absolute path whose top folder exists here is a server path; ``/v1/index/documents`` is not."""
    top = path.lstrip("/").split("/", 1)[0]
    return bool(top) and Path("/", top).exists()
