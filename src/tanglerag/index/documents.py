"""Documents in an index: what a user adds, replaces and removes, as opposed to the passages search returns.

A document is one source record or file. A short one is stored as a single passage under its own id; a long one
as chunks ``ID#0``, ``ID#1``, ... that remember their source. Replacing or removing a document therefore acts
on all of its chunks, and a changed document under a known id is never silently dropped: it is a conflict unless
the caller asked to replace it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tanglerag.errors import IndexStoreError, InputError
from tanglerag.types import Passage


class DocumentConflict(IndexStoreError):
    """Documents already in the index hold other text than the ones sent under their ids."""

    def __init__(self, ids: list[str]) -> None:
        shown = ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        super().__init__(f"document id {shown} already in the index with other text; replace it explicitly "
                         "(HTTP: replace=true or PUT /v1/index/documents/ID; CLI: --replace)")
        self.ids = ids


class UnknownDocuments(InputError):
    def __init__(self, ids: list[str]) -> None:
        super().__init__(f"no document with id {', '.join(repr(i) for i in ids[:5])} in the index")
        self.ids = ids


def document_id(passage: Passage) -> str:
    """The document a passage belongs to: a chunk's source, or the passage itself."""
    source, chunk = passage.metadata.get("source_id"), passage.metadata.get("chunk")
    if source is not None and passage.id == f"{source}#{chunk}":
        return str(source)
    return passage.id


def by_document(passages: Iterable[Passage]) -> dict[str, list[Passage]]:
    groups: dict[str, list[Passage]] = defaultdict(list)
    for p in passages:
        groups[document_id(p)].append(p)
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


def plan_write(existing: list[Passage], incoming: list[Passage], *, replace: bool) -> WritePlan:
    """Identical documents are skipped; changed ones are replaced when ``replace``, else a ``DocumentConflict``."""
    old_docs, old_passages = by_document(existing), {p.id: p for p in existing}
    changed = {doc for doc, parts in by_document(incoming).items()
               if doc in old_docs and _content(parts) != _content(old_docs[doc])}
    changed |= {document_id(old_passages[p.id]) for p in incoming  # an id reused by another document
                if p.id in old_passages and _content([p]) != _content([old_passages[p.id]])}
    if changed and not replace:
        raise DocumentConflict(sorted(changed))
    stale = {p.id for doc in changed for p in old_docs[doc]}
    kept = old_passages.keys() - stale
    fresh = [p for p in incoming if p.id not in kept]
    return WritePlan(fresh, stale, DocumentChanges(added=len(fresh), unchanged=len(incoming) - len(fresh),
                                                   removed=len(stale), replaced=sorted(changed)))


def passages_of(existing: Sequence[Passage], doc_ids: list[str]) -> set[str]:
    """The passage ids of these documents; ``UnknownDocuments`` names any the index does not hold."""
    docs = by_document(existing)
    missing = [d for d in doc_ids if d not in docs]
    if missing:
        raise UnknownDocuments(missing)
    return {p.id for d in doc_ids for p in docs[d]}


def _content(parts: list[Passage]) -> list[tuple[str, str, str]]:
    return sorted((p.id, p.title, p.text) for p in parts)
