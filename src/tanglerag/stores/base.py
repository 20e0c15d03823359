"""The contract between tanglerag and a vector store people already run (Qdrant, LanceDB, Chroma, or the embedded
faiss + SQLite index): what the methods, ``--where``, the conflict report and citations read through.

A store holds passages (id, text, title, metadata) with one vector each. Written by tanglerag, each passage's stored
record also carries the *filter fields* (``filter_fields``): its document's date as days since 0001-01-01 with the
date's precision, its source in lower case, its authority as a number, so a ``--where`` condition becomes the store's
own filter on typed values (a date compares as a date, a source without regard to case) and a filtered search on a
large collection does not fetch everything first. A collection tanglerag did not write is read through a
``FieldMapping`` (which payload field is the text, the title, the date, ...); a condition it cannot express there is
refused in one line (``StoreError``), never applied to a partial result in silence.

A backend is one module with a class fulfilling ``VectorStore`` that passes ``tests/stores/test_contract.py``, and a
line in ``stores/registry.py``.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

import numpy as np
from pydantic import ValidationError

from tanglerag.conflicts import DocumentMeta, Precision
from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.errors import TangleragError
from tanglerag.settings import Settings
from tanglerag.store_config import FieldMapping as FieldMapping  # part of the contract; kept in the core layer
from tanglerag.types import Passage
from tanglerag.where import Where, authority_tiers

DATE_DAYS = "_tr_date_days"
"""The filter field of a document's date (its first day) as days since 0001-01-01 (``date.toordinal()``)."""
DATE_LAST_DAYS = "_tr_date_last_days"
"""The last day the date covers at its precision (a year's 31 December): ``date = 2024-03`` is any day of March."""
SOURCE = "_tr_source"
"""The document's source case-folded (``source`` compares without regard to case, as ``where`` does)."""
AUTHORITY = "_tr_authority"
"""The document's authority as a number (tier names mapped by the tiers in force when it was written)."""
FILTER_FIELDS = (DATE_DAYS, DATE_LAST_DAYS, SOURCE, AUTHORITY)


@dataclass(frozen=True)
class Capabilities:
    """What a store offers besides dense search under a filter (every store does that). A front end asks for a
    capability by name (``stores.registry.require``) and a store without it is refused there, in one line naming the
    store and what it offers, never by branching on a backend's name."""

    index_folder: bool = False
    """It is the embedded index of ``--index DIR``: its folder, versions and document operations (--add, --remove,
    --sync, --replace, Ray builds, the service's uploads)."""
    sparse: bool = False
    """BM25 and hybrid ranking (``retrieval.mode``): the embedded index's BM25, or a store's own full-text search
    (``TextSearch``), fused with the dense ranking as the index fuses them."""
    separations: bool = False
    """CDIT's separations (``cdit trim`` writes them; every search honours them)."""
    personal: bool = False
    """PCAS's joint ranking of passages and a user's statements (questions with a user)."""
    every_filter: bool = False
    """Every ``--where`` condition applies; otherwise ``unsupported`` names those the store cannot push down."""

    def offered(self) -> list[str]:
        return ["dense search", *(DESCRIBED[name] for name, on in vars(self).items() if on)]


DESCRIBED = {"index_folder": "an index folder (--index) and its document operations",
             "sparse": "BM25 and hybrid ranking (retrieval.mode)", "separations": "CDIT's separations",
             "personal": "ranking with a user's statements (PCAS)", "every_filter": "every --where condition"}
"""Each capability in a person's words, for refusals."""


class StoreError(TangleragError):
    """A store that is down, a missing collection, a payload without the mapped field, a filter the store cannot
    express, a dimension that is not the embedder's: one line for the user (a 503 in the service)."""


@dataclass(frozen=True)
class StoredHit:
    """One search result: the passage as the store holds it and the store's similarity (higher is closer)."""

    passage: Passage
    score: float


class VectorStore(Protocol):
    """One collection of one store. Construction is cheap; the first call connects. Every call that reaches the
    store raises ``StoreError`` in our words when the store is down, the collection missing or a timeout passed."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    @classmethod
    def from_settings(cls, settings: Settings, embedder: TextEmbedder, index_dir: Path | None) -> Self:
        """The store ``settings.store`` describes (``index_dir``: the embedded index's folder, from ``--index``)."""

    def dimension(self) -> int | None:
        """The collection's vector size, or None when it does not exist yet."""

    def written_by(self) -> str | None:
        """The identity of the embedder the collection's vectors were made with, where tanglerag recorded it when it
        created the collection (None: not recorded, or no collection yet)."""

    def count(self) -> int:
        """Passages held (0 for a collection that does not exist yet)."""

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        """Write ``passages`` with their vectors (one row each, float32) and their filter fields; a passage whose id
        is held already is replaced. Creates the collection on first write. All or nothing per call where the store
        allows it."""

    def delete(self, ids: Sequence[str]) -> None:
        """Remove passages by id; ids the collection lacks are ignored."""

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every passage's id and metadata, a page at a time (no text, no vector): what the collection holds of
        which document and file, so that keeping it in step with a folder (``stores/documents.py``) reads it from
        the store itself, from whichever machine."""

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        """The ``k`` passages closest to ``vector`` (cosine), among those whose document passes ``where``, closest
        first. The filter is the store's own (pushed down), or the call is refused (``unsupported``)."""

    async def asearch(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        """``search`` for the async core: the event loop goes on while the store answers."""

    def unsupported(self, where: Where) -> str | None:
        """Why a condition of ``where`` cannot be pushed down to this collection (naming it), or None."""

    def close(self) -> None:
        """Let go of connections and files."""


class TextSearch(Protocol):
    """What a store that declares ``Capabilities.sparse`` offers besides ``VectorStore``: its own full-text ranking
    (PostgreSQL's ``tsvector``), under the same pushed-down filter."""

    def text_search(self, query: str, k: int, where: Where | None = None) -> list[StoredHit]:
        """The ``k`` passages whose text best matches ``query``'s words, best first (score: the store's text rank)."""


class ThreadedSearch:
    """``asearch`` as ``search`` in a worker thread, for a store whose client is synchronous."""

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        raise NotImplementedError

    async def asearch(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        return await asyncio.to_thread(self.search, vector, k, where)


class ServerStore(ThreadedSearch):
    """``from_settings`` for a store reached at ``store.url`` or kept in ``store.path`` (Qdrant, LanceDB, Chroma):
    built as ``Class(collection, url=, path=, fields=, timeout_s=, tiers=, api_key=, embedder=)`` (``embedder``:
    the configured embedder's identity, to record when the collection is created and give back from ``written_by``);
    dense search under the filters it can push down."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities] = Capabilities()

    def __init__(self, collection: str, **options: Any) -> None: ...

    @classmethod
    def from_settings(cls, settings: Settings, embedder: TextEmbedder, index_dir: Path | None) -> Self:
        config = settings.store
        if config.url is None and config.path is None:
            raise StoreError(f"store.backend={cls.name} needs store.url (a server: --store-url) or store.path (a "
                             "local folder: --store-path)")
        if config.url is not None and "://" not in config.url:
            raise StoreError(f"store.url {config.url!r} is no address (http://host:port): a folder is store.path "
                             "(--store-path)")
        api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
        return cls(config.collection, url=config.url, path=config.path, fields=config.fields,
                   timeout_s=config.timeout_s, tiers=authority_tiers(settings), api_key=api_key,
                   embedder=embedder_identity(embedder))


def read_record(record: Mapping[str, Any], fields: FieldMapping, *, what: str, fallback_id: object,
                skip: frozenset[str] = frozenset()) -> Passage:
    """The passage a stored record holds (a payload, a row, a metadata dict), read through ``store.fields``: the
    id (``fallback_id``, the store's own key, when ``fields.id`` is None), text and title from their fields, the
    provenance fields under their own names, every other field but ``skip`` and the filter fields as metadata.
    StoreError naming ``what`` ("point 7 of collection 'docs'") when the record lacks the id or the text: one reader
    for every backend, so a collection another tool wrote reads the same whichever store holds it."""
    text = record.get(fields.text)
    pid = record.get(fields.id) if fields.id else fallback_id
    if not isinstance(text, str) or not text.strip() or pid is None:
        missing = f"text field {fields.text!r}" if pid is not None else f"id field {fields.id!r}"
        raise StoreError(f"{what} has no {missing}: set store.fields to the fields that hold them")
    named = fields.named
    used = {fields.id, fields.text, fields.title, *named.values(), *skip} - {None}
    metadata = {key: value for key, value in record.items() if key not in used and not key.startswith("_tr_")}
    metadata |= {key: record[field] for key, field in named.items() if field is not None and field in record}
    try:
        return Passage(id=str(pid), title=str(record.get(fields.title) or "") if fields.title else "", text=text,
                       metadata=metadata)
    except ValidationError as exc:
        raise StoreError(f"{what}: {exc.errors()[0]['msg']}") from None


def not_ours(where: str, collection: str) -> str:
    """The refusal of a write into a collection that holds points but no mark of tanglerag's layout: another tool's
    (LlamaIndex, LangChain, a client of its own), which a write would damage for it and for us."""
    return (f"{where}: collection {collection!r} holds points tanglerag did not write (it has no tanglerag mark): "
            "nothing is written into another tool's collection; name another --collection")


def own_layout(where: str, fields: FieldMapping) -> None:
    """A write (or delete) goes only to a collection of tanglerag's own layout: one read through ``store.fields`` was
    written by another tool, and tanglerag must not change it. ``where`` names the store in the message."""
    if fields != FieldMapping():
        raise StoreError(f"{where}: store.fields maps a collection another tool wrote; tanglerag writes "
                         "only its own layout (leave store.fields at its defaults, or write another collection)")


def check_write(where: str, fields: FieldMapping, passages: Sequence[Passage], vectors: np.ndarray) -> None:
    """What every backend checks before an upsert: its own layout, and one vector a passage."""
    own_layout(where, fields)
    if len(passages) != len(vectors):
        raise StoreError(f"{where}: {len(passages)} passages but {len(vectors)} vectors")


def filter_fields(metadata: Mapping[str, Any], tiers: Mapping[str, float]) -> dict[str, Any]:
    """The filter fields of a passage written by tanglerag, from its metadata (read with the one parser of
    provenance, as ``--where`` reads it); a field the document does not give is left out."""
    meta = DocumentMeta.from_metadata(metadata, dict(tiers))
    fields: dict[str, Any] = {}
    if meta.date is not None:
        fields[DATE_DAYS] = meta.date.toordinal()
        fields[DATE_LAST_DAYS] = last_day(meta.date, meta.date_precision).toordinal()
    if meta.source:
        fields[SOURCE] = meta.source.casefold()
    if meta.authority is not None:
        fields[AUTHORITY] = float(meta.authority)
    return fields


def last_day(first: datetime.date, precision: Precision | None) -> datetime.date:
    """The last day a date of ``precision`` ("year", "month", "day") starting at ``first`` covers."""
    if precision == "year":
        return first.replace(month=12, day=31)
    if precision == "month":
        following = first.replace(day=28) + datetime.timedelta(days=4)
        return following - datetime.timedelta(days=following.day)
    return first
