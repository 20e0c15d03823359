"""A Chroma collection as a store (the ``chromadb`` package, an optional extra: ``pip install 'tanglerag[chroma]'``).

``url`` reaches a Chroma server (``chroma run``, a container, a cluster) with Chroma's HTTP client; ``path`` opens
Chroma's embedded persistent client on a folder. A record is keyed by the passage id itself (Chroma's ids are text),
its document is the passage's text and its vector the one we hand it (no Chroma embedding function). Its metadata
holds the title, each metadata value Chroma can hold as it is (text, a boolean, a finite number), each other one (a
list, an object, null) as JSON text under ``_tr_json_KEY``, and the filter fields (``base.filter_fields``,
``pushdown.meta_fields`` and what ``chroma_filter.chroma_fields`` adds), so a ``--where`` becomes Chroma's own
``where`` (``chroma_filter``).

The collection ranks by cosine (``hnsw:space``). Chroma's HNSW index is approximate: ``CONSTRUCTION_EF`` and
``SEARCH_EF`` were chosen by recall@10 against exact search on 20,000 random 128-dimension vectors (the hard case:
real embeddings cluster), 0.62 at Chroma's default of 100 and 0.96 at these; the test measures it again on 4,000.

A collection tanglerag writes is marked in its collection metadata (``MARK``); one without the mark was written by
another tool, has no filter fields and is read through ``store.fields``: a ``--where`` on it is refused in one line.
A record whose metadata lacks the mapped text field is read from its document when the mapping keeps the default
``text`` (where Chroma keeps text), and its id is Chroma's own when the mapping keeps ``id`` and the record has none.

Each ``upsert`` is one Chroma call for up to the client's ``get_max_batch_size()`` records, which Chroma checks whole
before it writes any: all or nothing per call (a larger call is split, each part all or nothing).
"""

from __future__ import annotations

import base64
import json
import math
import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.errors import InputError
from tanglerag.redaction import without_credentials
from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import (
    ServerStore,
    StoredHit,
    StoreError,
    check_write,
    filter_fields,
    not_ours,
    own_layout,
    read_record,
)
from tanglerag.stores.chroma_filter import PRESENT, chroma_fields, chroma_where
from tanglerag.stores.pushdown import Refused, clauses, meta_fields
from tanglerag.types import Passage
from tanglerag.where import Where

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

MARK = "tanglerag:filter_fields"
EMBEDDER_MARK = "tanglerag:embedder"
"""The collection metadata key that says tanglerag wrote the collection (and so every record's filter fields)."""
OWN_FIELDS = ("id", "text", "title")
JSON_PREFIX = "_tr_json_"
SCAN_PAGE = 512
"""Records read a request when the collection's metadata is scanned."""
"""A metadata value Chroma cannot hold, kept as JSON text under this prefix and its key."""
CONSTRUCTION_EF = 200
SEARCH_EF = 500
_INT64 = 2**63


_CHROMA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]")
"""Chroma's rule for a collection name, checked before Chroma answers a bad one with only a trace id."""


class ChromaStore(ServerStore):
    """One collection of a Chroma server (``url``, used when given) or of Chroma's embedded persistent client
    (``path``)."""

    name: ClassVar[str] = "chroma"

    def __init__(self, collection: str, *, url: str | None = None, path: Path | None = None,
                 fields: FieldMapping | None = None, timeout_s: float = 10.0, api_key: str | None = None,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, embedder: str | None = None) -> None:
        self.embedder = embedder
        if url is None and path is None:
            raise StoreError("store.backend=chroma needs store.url (a Chroma server) or store.path (a folder for "
                             "Chroma's embedded client)")
        if not _CHROMA_NAME.fullmatch(collection) or ".." in collection:
            raise StoreError(f"chroma cannot name a collection {collection!r}: a name is 3 to 512 letters, digits, "
                             "'.', '_' or '-', starting and ending with a letter or digit, without '..'")
        self.collection, self.url, self.path = collection, url, path
        self.fields = fields or FieldMapping()
        self.timeout_s, self.tiers, self._api_key = timeout_s, dict(tiers), api_key
        self._client: ClientAPI | None = None
        self._held: Collection | None = None
        self.where = f"chroma at {without_credentials(url)}" if url else f"chroma (embedded, {path})"

    # -- connection ---------------------------------------------------------------------
    @property
    def client(self) -> ClientAPI:
        if self._client is None:
            with self._reaching("connect"):
                import chromadb
                from chromadb.config import Settings

                settings = Settings(anonymized_telemetry=False)
                if self.url is None:
                    self._client = chromadb.PersistentClient(path=str(self.path), settings=settings)
                else:
                    self._client = self._http_client(self.url, settings)
        return self._client

    def _http_client(self, url: str, settings: Any) -> ClientAPI:
        """Chroma's HTTP client, with the timeout it lacks (its session waits forever): the server's heartbeat is
        asked first within ``timeout_s``, then every call of the client's session is bounded by it."""
        import chromadb
        import httpx

        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StoreError(f"{self.where}: store.url must be http(s)://HOST[:PORT], got {without_credentials(url)}")
        headers = _auth_headers(parts, self._api_key)
        bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path.rstrip("/"), "",
                                        ""))
        httpx.get(f"{bare}/api/v2/heartbeat", headers=headers, timeout=self.timeout_s).raise_for_status()
        client = chromadb.HttpClient(host=bare, headers=headers, settings=settings)
        session = getattr(getattr(client, "_server", None), "_session", None)
        if isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(self.timeout_s)
        return client

    @contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """A call to Chroma; its failures (down, timeout, missing collection, a refused record) as one line naming
        the store, never a URL's credentials."""
        try:
            import httpx
            from chromadb.errors import ChromaError, NotFoundError
        except ImportError:
            raise StoreError("store.backend=chroma needs chromadb: pip install 'tanglerag[chroma]'") from None

        try:
            yield
        except NotFoundError:
            raise StoreError(self._line(what, "the collection does not exist")) from None
        except httpx.TimeoutException:
            raise StoreError(self._line(what, f"no answer within {self.timeout_s:g} s")) from None
        except httpx.HTTPStatusError as exc:
            raise StoreError(self._line(what, f"HTTP {exc.response.status_code}")) from None
        except (ChromaError, httpx.HTTPError, ValueError, OSError, RuntimeError) as exc:
            raise StoreError(self._line(what, _first_line(str(exc)) or type(exc).__name__)) from None
        except Exception as exc:
            if type(exc) is Exception:  # what Chroma's HTTP client raises for an error body it does not know
                raise StoreError(self._line(what, _first_line(str(exc)) or "error")) from None
            raise

    def _line(self, what: str, why: str) -> str:
        return without_credentials(f"{self.where}, collection {self.collection!r}: {what} failed: {why}")

    def _found(self) -> Collection | None:
        """The collection, or None when it does not exist (yet)."""
        from chromadb.errors import NotFoundError

        if self._held is None:
            with self._reaching("open the collection"):
                try:
                    self._held = self.client.get_collection(self.collection, embedding_function=None)
                except NotFoundError:
                    return None
        return self._held

    def _existing(self) -> Collection:
        found = self._found()
        if found is None:
            raise StoreError(self._line("search", "the collection does not exist"))
        return found

    # -- the contract ---------------------------------------------------------------------
    def dimension(self) -> int | None:
        found = self._found()
        if found is None:
            return None
        with self._reaching("read a vector"):
            held = found.get(limit=1, include=["embeddings"])["embeddings"]
        return None if held is None or len(held) == 0 else len(held[0])

    def written_by(self) -> str | None:
        found = self._found()
        held = (found.metadata or {}).get(EMBEDDER_MARK) if found is not None else None
        return str(held) if held else None

    def count(self) -> int:
        found = self._found()
        if found is None:
            return 0
        with self._reaching("count"):
            return int(found.count())

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        check_write(self.where, self.fields, passages, vectors)
        if not passages:
            return
        records = [self._record(passage) for passage in passages]
        collection = self._created()
        with self._reaching(f"write {len(passages)} passages"):
            step = int(self.client.get_max_batch_size())
            for start in range(0, len(passages), step):
                self._write(collection, passages[start:start + step], vectors[start:start + step],
                            records[start:start + step])

    def delete(self, ids: Sequence[str]) -> None:
        own_layout(self.where, self.fields)
        found = self._found()
        if not ids or found is None:
            return
        with self._reaching("delete"):
            found.delete(ids=list(ids))

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        found = self._found()
        start = 0
        while found is not None:
            with self._reaching("read the passages' metadata"):
                page = found.get(include=["metadatas"], limit=SCAN_PAGE, offset=start)
            for key, record in zip(page["ids"], page["metadatas"] or [], strict=True):
                yield key, self._passage(key, "", {**(record or {}), "text": "-"}).metadata
            if len(page["ids"]) < SCAN_PAGE:
                return
            start += SCAN_PAGE

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        refused = self.unsupported(where) if where is not None else None
        if refused is not None:
            raise StoreError(refused)
        collection = self._existing()
        if k <= 0:
            return []
        query = np.asarray(vector, dtype="float32").reshape(1, -1)
        with self._reaching("search"):
            found = collection.query(query_embeddings=query, n_results=k,
                                     where=cast(Any, chroma_where(clauses(where))) if where else None,
                                     include=["documents", "metadatas", "distances"])
        rows = zip(found["ids"][0], (found["documents"] or [[]])[0], (found["metadatas"] or [[]])[0],
                   (found["distances"] or [[]])[0], strict=True)
        return [StoredHit(passage=self._passage(key, document, metadata or {}), score=1.0 - float(distance))
                for key, document, metadata, distance in rows]

    def unsupported(self, where: Where) -> str | None:
        found = self._found()
        if found is not None and not (found.metadata or {}).get(MARK):
            return (f"{self.where}: collection {self.collection!r} was not written by tanglerag and holds no filter "
                    f"fields, so the filter {where.text.strip()!r} cannot be pushed down: ask without it")
        try:
            found_clauses = clauses(where)
            chroma_where(found_clauses)
        except Refused as exc:
            return f"{self.where}: {exc}"
        for clause in found_clauses:
            if clause.text_field is not None and found is not None and self._holds(found, clause.text_field):
                return (f"{self.where}: {clause.condition!r} would order the text values of that key as text, which "
                        "a Chroma filter cannot")
        return None

    def close(self) -> None:
        close = getattr(self._client, "close", None)  # Chroma's clients have it; its ClientAPI type does not say so
        if callable(close):
            close()
        self._client, self._held = None, None

    # -- collection ---------------------------------------------------------------------
    def _created(self) -> Collection:
        found = self._found()
        if found is not None:
            if not (found.metadata or {}).get(MARK):
                with self._reaching("count"):
                    held = found.count()
                if held:
                    raise StoreError(not_ours(self.where, self.collection))
            return found
        metadata: dict[str, Any] = {"hnsw:space": "cosine", "hnsw:construction_ef": CONSTRUCTION_EF,
                                    "hnsw:search_ef": SEARCH_EF, MARK: 1,
                                    **({EMBEDDER_MARK: self.embedder} if self.embedder else {})}
        with self._reaching("create the collection"):
            self._held = self.client.get_or_create_collection(self.collection, metadata=metadata,
                                                              embedding_function=None)
        return self._held

    def _holds(self, collection: Collection, name: str) -> bool:
        """Whether any record holds the filter field ``name``."""
        with self._reaching("look up a field"):
            return bool(collection.get(where=cast(Any, {PRESENT: {"$contains": name}}), limit=1, include=[])["ids"])

    def _write(self, collection: Collection, passages: Sequence[Passage], vectors: np.ndarray,
               records: list[dict[str, Any]]) -> None:
        """One upsert. Chroma's upsert merges a known record's metadata with the new one, so each key it held and
        the new record lacks is written as None (Chroma's "remove this key"): the record is replaced whole."""
        ids = [passage.id for passage in passages]
        held = collection.get(ids=ids, include=["metadatas"])
        stale = {key: set(old or {}) for key, old in zip(held["ids"], held["metadatas"] or [], strict=True)}
        metadatas = [{**dict.fromkeys(stale.get(pid, set()) - set(record)), **record}
                     for pid, record in zip(ids, records, strict=True)]
        collection.upsert(ids=ids, embeddings=np.asarray(vectors, dtype="float32"),
                          documents=[passage.text for passage in passages], metadatas=cast(Any, metadatas))

    # -- records ------------------------------------------------------------------------
    def _record(self, passage: Passage) -> dict[str, Any]:
        metadata = passage.model_dump(mode="json")["metadata"]
        clash = sorted(key for key in metadata if key in OWN_FIELDS or key.startswith("_tr_"))
        if clash:
            raise StoreError(f"{self.where}: passage {passage.id!r} has metadata {clash[0]!r}, a name the store keeps "
                             "for itself")
        fields = meta_fields(metadata)
        for name in ("date", "source", "authority"):  # each alone: as in Where, a bad date leaves the source usable
            with suppress(InputError):
                fields |= filter_fields({name: metadata.get(name)}, self.tiers)
        flat = {key if _holdable(value) else JSON_PREFIX + key: value if _holdable(value) else json.dumps(value)
                for key, value in metadata.items()}
        return {**flat, "title": passage.title, **chroma_fields(fields)}

    def _passage(self, key: str, document: str | None, record: Mapping[str, Any]) -> Passage:
        """The passage a record holds, read through ``store.fields``: Chroma keeps the text as the record's document
        and the id as its key, and metadata it cannot hold as JSON text (``JSON_PREFIX``)."""
        full = {**{n: v for n, v in record.items() if not n.startswith(JSON_PREFIX)},
                **{n[len(JSON_PREFIX):]: json.loads(v) for n, v in record.items() if n.startswith(JSON_PREFIX)}}
        if self.fields.text == "text" and document is not None:
            full.setdefault("text", document)
        if self.fields.id == "id":
            full.setdefault("id", key)
        return read_record(full, self.fields, what=f"{self.where}: record {key!r} of collection {self.collection!r}",
                           fallback_id=key)


def _holdable(value: Any) -> bool:
    """A value Chroma keeps as it is: text, a boolean, a 64-bit integer or a finite float (not -0.0: it comes back
    as 0.0)."""
    if isinstance(value, str | bool):
        return True
    if isinstance(value, int):
        return -_INT64 <= value < _INT64
    return isinstance(value, float) and math.isfinite(value) and math.copysign(1.0, value) > 0


def _auth_headers(parts: urllib.parse.SplitResult, api_key: str | None) -> dict[str, str]:
    """Basic auth from the URL's user info, or Chroma's token header from the API key."""
    if parts.username is not None:
        pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    return {"X-Chroma-Token": api_key} if api_key else {}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""
