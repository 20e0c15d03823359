"""Which documents may say where they come from: the operator's ``trust`` setting.

A document's front matter or metadata can name its ``source``, its ``authority`` and its ``date``, and the ledger
believes them when it settles a dispute. Without a setting every document may declare all three (as before), but an
authority is bounded to the scale of ``ledger.authority_tiers`` (``authority: 1000000`` counts as the top tier).
With ``trust.declare`` set, only the documents an entry matches (by path pattern, gitignore-style, relative to the
folder indexed; or by document id for records) may declare what that entry allows; every other document's
declarations are ignored (``trust.others``), and the answer's report says so, naming the file. Two documents
that claim one source from different folders are flagged, whatever the setting.

Why a core module: provenance is read once for every method that reports conflicts, and the inspector and the
report show where each trust came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tanglerag.config import Section
from tanglerag.errors import InputError

Declared = Literal["source", "authority", "date"]
DECLARED: tuple[Declared, ...] = ("source", "authority", "date")


class TrustEntry(BaseModel):
    """Documents matched by ``paths`` (or ``ids``) may declare ``may_declare``, an authority up to ``max_authority``
    (a number or a tier name; default the tiers' top) and, when ``sources`` is given, only those source names."""

    model_config = ConfigDict(extra="forbid")
    paths: list[str] = Field(default_factory=list, description="gitignore-style patterns on the file's path")
    ids: list[str] = Field(default_factory=list, description="document ids (JSONL records), exactly")
    may_declare: list[Declared] = Field(default_factory=lambda: list(DECLARED))
    sources: list[str] = Field(default_factory=list, description="the source names these documents may claim")
    max_authority: float | str | None = None

    @cached_property
    def _spec(self) -> Any:
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self.paths)

    @field_validator("max_authority")
    @classmethod
    def _number_or_name(cls, value: float | str | None) -> float | str | None:
        """A number written as text ("1", as YAML quoting or --set gives it) is a number; a tier name stays a name
        (checked against the tiers where they are known)."""
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value.strip()
        return value

    @model_validator(mode="after")
    def _matches_something(self) -> TrustEntry:
        if not self.paths and not self.ids:
            raise ValueError("a trust entry needs paths or ids: one with neither matches no document")
        return self

    def matches(self, path: str | None, doc_id: str | None) -> bool:
        return (path is not None and bool(self.paths) and self._spec.match_file(path)) or \
            (doc_id is not None and doc_id in self.ids)


class TrustConfig(Section):
    """``trust``: who may declare a document's source, authority and date."""

    declare: list[TrustEntry] = Field(default_factory=list, description=(
        "entries, first match wins: the documents each matches and what they may declare; empty: every document "
        "may declare everything (authority bounded to the tiers' scale)"))
    others: list[Declared] | None = Field(None, description=(
        "what documents matched by no entry may declare; default: everything when 'declare' is empty, nothing "
        "when it is not"))


class Trusted(BaseModel):
    """One document's declarations after trust: what is kept, and a line for each thing ignored or bounded."""

    metadata: dict[str, Any]
    notes: list[str] = Field(default_factory=list)
    ignored: bool = Field(False, description="a declaration of the document's was ignored (not merely bounded)")


def _document_id(metadata: Mapping[str, Any], passage_id: str | None) -> str | None:
    record = metadata.get("source_id")  # a record cut into chunks names its id here; one of a single chunk is its id
    return record if isinstance(record, str) else passage_id


def entry_for(metadata: Mapping[str, Any], config: TrustConfig, passage_id: str | None = None) -> TrustEntry | None:
    """The trust entry a document falls under (the first that matches its path or id), None for none."""
    path = metadata.get("path") if isinstance(metadata.get("path"), str) else None
    doc_id = _document_id(metadata, passage_id)
    return next((e for e in config.declare if e.matches(path, doc_id)), None)


def apply_trust(metadata: Mapping[str, Any], config: TrustConfig, top: float,
                tiers: Mapping[str, float], passage_id: str | None = None) -> Trusted:
    """``metadata`` without the declarations its document may not make, authority bounded to ``top`` (or the
    entry's ``max_authority``), with why for each change. ``date_from_text`` is cleared too when the document may
    not declare a date: a date in its words is a declaration as much as one in its front matter."""
    path = metadata.get("path") if isinstance(metadata.get("path"), str) else None
    where = path or _document_id(metadata, passage_id) or "a document"
    entry = entry_for(metadata, config, passage_id)
    if entry is not None:
        allowed, label = set(entry.may_declare), f"trust entry {', '.join(entry.paths or entry.ids)}"
        why = f"{label} does not let it"
    else:
        others = config.others if config.others is not None else (list(DECLARED) if not config.declare else [])
        allowed, label = set(others), "default" if not config.declare else "no trust entry"
        why = "outside the trusted paths" if config.declare else "trust.others does not let it"
    kept, notes = dict(metadata), []
    for field in DECLARED:
        if field not in allowed and metadata.get(field) not in (None, ""):
            kept.pop(field)
            notes.append(f"{where}: declared {field} {metadata[field]!r} ignored ({why})")
    if "date" not in allowed:
        kept["date_from_text"] = False
    if entry is not None and entry.sources and kept.get("source") not in (None, *entry.sources):
        notes.append(f"{where}: declared source {kept.pop('source')!r} ignored (not one its trust entry names)")
    bound = _bound(entry, top, tiers)
    authority = kept.get("authority")
    lowered = {k.lower(): v for k, v in tiers.items()}
    value = lowered.get(authority.strip().lower()) if isinstance(authority, str) else authority
    if isinstance(value, int | float) and not isinstance(value, bool) and value > bound:
        kept["authority"] = bound
        notes.append(f"{where}: authority {authority!r} bounded to {bound:g}")
    ignored = any(field not in kept for field in DECLARED if metadata.get(field) not in (None, ""))
    return Trusted(metadata=kept, notes=notes, ignored=ignored)


def _bound(entry: TrustEntry | None, top: float, tiers: Mapping[str, float]) -> float:
    limit = entry.max_authority if entry is not None else None
    if isinstance(limit, str):
        named = {k.lower(): v for k, v in tiers.items()}.get(limit.lower())
        if named is None:
            raise InputError(f"trust entry {', '.join(entry.paths or entry.ids) if entry else ''}: max_authority "
                             f"{limit!r} is no tier of ledger.authority_tiers ({', '.join(tiers)})")
        return float(named)
    return min(float(limit), top) if limit is not None else top


def same_source_elsewhere(declared: Mapping[str, tuple[str | None, str | None]]) -> list[str]:
    """One line for each source two documents in different folders claim (``declared``: passage id -> (source,
    path)): a copy placed elsewhere that borrows a trusted name is worth a reader's look."""
    folders: dict[str, dict[str, str]] = {}
    for source, path in declared.values():
        if source and path:
            folders.setdefault(source, {}).setdefault(path.rsplit("/", 1)[0] if "/" in path else ".", path)
    return [f"source {source!r} is claimed from {len(places)} folders: {', '.join(sorted(places.values()))}"
            for source, places in folders.items() if len(places) > 1]
