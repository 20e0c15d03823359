"""Documents in an index: what a user adds, replaces and removes, as opposed to the passages search returns.

A document is one source record or file. A short one is stored as a single passage under its own id; a long one
as chunks ``ID#0``, ``ID#1``, ... that remember their source (and each carry the document's metadata). Replacing or
removing a document therefore acts on all of its chunks, and a changed document (its text, title or metadata) under
a known id is never silently dropped: it is a conflict unless the caller asked to replace it.

Which document a stored passage belongs to is stored with it (the passage store's ``doc_id``), never read from the
shape of its id: ``x#1`` may be chunk 1 of ``x`` or a document of its own. A passage id is held by one document
only, so a write whose passage id another document holds is refused, replacing or not.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tanglerag.errors import IndexStoreError, InputError
from tanglerag.types import Passage


class DocumentConflict(IndexStoreError):
    """Documents already in the index hold other text (or metadata) than the ones sent under their ids."""

    def __init__(self, ids: list[str]) -> None:
        shown = ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        super().__init__(f"document id {shown} already in the index with other text or metadata; replace it "
                         "explicitly (HTTP: replace=true or PUT /v1/index/documents/ID; CLI: --replace)")
        self.ids = ids


class PassageIdTaken(IndexStoreError):
    """An incoming passage's id is held by a passage of another document (a chunk id and a document id alike)."""

    def __init__(self, taken: dict[str, tuple[str, str]]) -> None:
        shown = "; ".join(f"{pid!r} of document {new!r} is held by document {old!r}"
                          for pid, (new, old) in list(taken.items())[:3])
        super().__init__(f"passage id {shown}{' and more' if len(taken) > 3 else ''}: a passage id belongs to one "
                         "document, so nothing was written; give the document another id or remove the other first")
        self.ids = list(taken)


class UnknownDocuments(InputError):
    def __init__(self, ids: list[str]) -> None:
        super().__init__(f"no document with id {', '.join(repr(i) for i in ids[:5])} in the index")
        self.ids = ids


def document_id(passage: Passage) -> str:
    """The document a passage belongs to: a chunk's source, or the passage itself."""
    return document_of(passage.id, passage.metadata)


def document_of(passage_id: str, metadata: Mapping[str, Any]) -> str:
    """``document_id`` from a passage's id and metadata alone (a store's scan holds no text)."""
    source, chunk = metadata.get("source_id"), metadata.get("chunk")
    if source is not None and passage_id == f"{source}#{chunk}":
        return str(source)
    return passage_id


def by_document(passages: Iterable[Passage], docs: Iterable[str] | None = None) -> dict[str, list[Passage]]:
    """Passages grouped by document: ``docs`` names each one's (as stored), else ``document_id`` says."""
    groups: dict[str, list[Passage]] = defaultdict(list)
    passages = list(passages)
    for p, doc in zip(passages, map(document_id, passages) if docs is None else docs, strict=True):
        groups[doc].append(p)
    return groups


@dataclass
class DocumentChanges:
    """What one write did; counts are passages, ``replaced`` and ``removed_documents`` name documents."""

    added: int = 0
    unchanged: int = 0
    removed: int = 0
    replaced: list[str] = field(default_factory=list)
    removed_documents: list[str] = field(default_factory=list)


@dataclass
class WritePlan:
    fresh: list[Passage]  # passages to embed and add
    stale: set[str]  # passage ids to remove first (the old text of replaced documents)
    changes: DocumentChanges


def plan_write(stored: Mapping[str, list[Passage]], incoming: list[Passage], *, replace: bool) -> WritePlan:
    """``stored``: the stored documents the incoming passages touch (theirs, and those holding one of their ids),
    by the document each passage is stored under. Identical documents are skipped; changed ones are replaced when
    ``replace``, else a ``DocumentConflict``; an id another document holds is a ``PassageIdTaken``."""
    owner = {p.id: doc for doc, parts in stored.items() for p in parts}
    taken = {p.id: (document_id(p), owner[p.id]) for p in incoming
             if p.id in owner and owner[p.id] != document_id(p)}
    if taken:
        raise PassageIdTaken(taken)
    changed = sorted(doc for doc, parts in by_document(incoming).items()
                     if doc in stored and _content(parts) != _content(stored[doc]))
    if changed and not replace:
        raise DocumentConflict(changed)
    stale = {p.id for doc in changed for p in stored[doc]}
    fresh = [p for p in incoming if p.id not in owner or p.id in stale]
    return WritePlan(fresh, stale, DocumentChanges(added=len(fresh), unchanged=len(incoming) - len(fresh),
                                                   removed=len(stale), replaced=changed))


def passages_of(docs: Mapping[str, list[Passage]], doc_ids: list[str]) -> set[str]:
    """The passage ids of these documents (``docs``: the index's, by stored document); ``UnknownDocuments`` names
    any the index does not hold."""
    missing = [d for d in doc_ids if d not in docs]
    if missing:
        raise UnknownDocuments(missing)
    return {p.id for d in doc_ids for p in docs[d]}


def _content(parts: list[Passage]) -> list[tuple[str, str, str, str]]:
    """What makes two versions of a document the same: each passage's id, title, text and metadata (a new date or
    source under the same text is a change too, replaced when asked and never dropped silently)."""
    return sorted((p.id, p.title, p.text, json.dumps(p.metadata, sort_keys=True)) for p in parts)
