"""A Markdown file's YAML front matter, read as the document's metadata (``date``, ``source``, ``authority``,
``meta``, ``title`` ...), with values kept JSON-ready for the passage store.

Why here: the Markdown loader and ingest's other readers both need it, and ingest sits above the loaders.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

import yaml

from tanglerag.errors import IngestError
from tanglerag.loaders import bounds


class _AliasRefused(Exception):
    """Front matter that uses an alias (``*name``, a merge key's ``<<: *name``)."""


class _FrontMatterLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """Safe YAML that leaves dates as text, as JSONL gives them: one parser (``conflicts.parse_date``) reads them
    all, and an impossible one (2024-13-01) is refused naming the field instead of failing inside YAML. It takes no
    aliases: a few lines of nested ones ("billion laughs") expand past any memory, and metadata needs none."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasRefused(f"uses an alias (*{event.anchor}) at line {event.start_mark.line + 2}; write the "
                                "value out (front matter takes no aliases: a few lines of them expand without end)")
        return super().compose_node(parent, index)


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
    if len(found[1].encode()) > bounds.FRONT_MATTER_BYTES:
        raise IngestError(f"{name}: front matter is over {bounds.FRONT_MATTER_BYTES // 1000} KB (ingest bound)")
    try:
        fields = yaml.load(found[1], Loader=_FrontMatterLoader)  # a SafeLoader: plain data only
    except _AliasRefused as exc:
        raise IngestError(f"{name}: front matter {exc}") from None
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
    names the field holding anything else (YAML's binary or set values, Python objects) or a number that is not
    finite (JSON has no NaN or infinity, and no filter or policy can compare one)."""
    if isinstance(value, datetime.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"field {field!r}: {value} is not a finite number")
    if isinstance(value, dict):
        return {str(key): json_ready(item, f"{field}.{key}" if field else str(key)) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item, field) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError(f"field {field!r}: a {type(value).__name__} is not a value metadata can hold (text, a number, "
                     "true/false, a date, a list or a mapping)")


