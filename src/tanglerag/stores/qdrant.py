"""A Qdrant collection as a store (``qdrant-client``, an optional extra: ``pip install 'tanglerag[qdrant]'``).

The same code talks to a Qdrant server or cluster (``url``) and runs in Qdrant's local mode (``path``, or in memory
without either), which is what the tests and benchmarks run here. Points are keyed by ``uuid5`` of the passage id
(Qdrant takes only unsigned integers and UUIDs), the id itself kept in the payload beside the text, the title, the
metadata as given (nested values stay nested: Qdrant payloads are JSON), the filter fields (``base.filter_fields``)
and the ``meta.KEY`` fields (``pushdown.meta_fields``). A ``--where`` becomes one Qdrant ``Filter``: ``Range`` on the
numeric fields, ``MatchAny`` / ``MatchValue`` on the lower-cased source and the case-folded meta texts, ``IsEmpty``
for "has the field"; on a server, payload indexes on those fields keep a filtered search from scanning.

A collection tanglerag writes is marked in its collection metadata (Qdrant 1.16 or later); one without the mark was
written by another tool, has no filter fields, and is read through ``store.fields``: a ``--where`` on it is refused
in one line. Each ``upsert`` is one request, which Qdrant applies whole or refuses.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.errors import InputError
from tanglerag.redaction import without_credentials
from tanglerag.store_config import FieldMapping
from tanglerag.stores.base import (
    AUTHORITY,
    DATE_DAYS,
    DATE_LAST_DAYS,
    SOURCE,
    ServerStore,
    StoredHit,
    StoreError,
    check_write,
    filter_fields,
    not_ours,
    read_record,
)
from tanglerag.stores.pushdown import Between, FilterClause, OneOf, Refused, Test, clauses, meta_fields
from tanglerag.types import Passage
from tanglerag.where import Where

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models

ID_NAMESPACE = uuid.UUID("6f1c3a52-2a7e-4f0e-9a53-4c1d8e0b7a21")
"""The namespace of the point ids: ``uuid5(ID_NAMESPACE, passage id)``, the same id for a passage on every write."""
MARK = "tanglerag"
"""The collection metadata key that says tanglerag wrote the collection (and so every point's filter fields)."""
OWN_FIELDS = ("id", "text", "title")
SCAN_PAGE = 512
"""Points read a request when the collection's metadata is scanned."""
_INDEXED = {DATE_DAYS: "integer", DATE_LAST_DAYS: "integer", SOURCE: "keyword", AUTHORITY: "float"}


class QdrantStore(ServerStore):
    """One collection of a Qdrant server (``url``), of a local-mode folder (``path``), or in memory (neither)."""

    name: ClassVar[str] = "qdrant"

    def __init__(self, collection: str, *, url: str | None = None, path: Path | None = None,
                 fields: FieldMapping | None = None, timeout_s: float = 10.0, api_key: str | None = None,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS, embedder: str | None = None) -> None:
        self.collection = collection
        self.embedder = embedder
        self.url, self.path = url, path
        self.fields = fields or FieldMapping()
        self.timeout_s, self.tiers = timeout_s, dict(tiers)
        self._api_key = api_key
        self._client: QdrantClient | None = None
        self._indexed: set[str] = set()
        self.where = f"qdrant at {without_credentials(url)}" if url else (
            f"qdrant (local, {path})" if path else "qdrant (in memory)")

    # -- connection ---------------------------------------------------------------------
    @property
    def client(self) -> QdrantClient:
        if self._client is None:
            try:
                from qdrant_client import QdrantClient
            except ImportError:
                raise StoreError("store.backend=qdrant needs qdrant-client: pip install 'tanglerag[qdrant]'") from None
            with self._reaching("open"):
                if self.url:
                    # no version check: against a server that is down it is a warning printed before our one line
                    self._client = QdrantClient(url=self.url, api_key=self._api_key, timeout=int(self.timeout_s),
                                                check_compatibility=False)
                else:
                    self._client = QdrantClient(path=str(self.path) if self.path else ":memory:")
        return self._client

    @property
    def local(self) -> bool:
        """Local mode keeps no payload indexes (it scans; a server needs them)."""
        return not self.url

    @contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """A call to Qdrant; its failures (down, timeout, missing collection, a local folder another process holds)
        as one line naming the store, never a URL's credentials."""
        from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

        try:
            yield
        except UnexpectedResponse as exc:
            found = "collection not found" if exc.status_code == 404 else f"HTTP {exc.status_code} {exc.reason_phrase}"
            raise StoreError(self._line(what, f"{found}: {_first_line(exc.content.decode(errors='replace'))}")) \
                from None
        except (ApiException, OSError, TimeoutError, RuntimeError, ValueError) as exc:
            raise StoreError(self._line(what, _first_line(str(exc)) or type(exc).__name__)) from None
        except Exception as exc:
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise StoreError(self._line(what, _first_line(str(exc)) or type(exc).__name__)) from None
            raise

    def _line(self, what: str, why: str) -> str:
        return without_credentials(f"{self.where}, collection {self.collection!r}: {what} failed: {why}")

    def _exists(self) -> bool:
        with self._reaching("check the collection"):
            return bool(self.client.collection_exists(self.collection))

    def _info(self) -> models.CollectionInfo:
        with self._reaching("read the collection"):
            return self.client.get_collection(self.collection)

    # -- the contract ---------------------------------------------------------------------
    def dimension(self) -> int | None:
        return self._vector_params()[1] if self._exists() else None

    def count(self) -> int:
        if not self._exists():
            return 0
        with self._reaching("count"):
            return int(self.client.count(self.collection, exact=True).count)

    def upsert(self, passages: Sequence[Passage], vectors: np.ndarray) -> None:
        check_write(self.where, self.fields, passages, vectors)
        if not passages:
            return
        points = self._points(passages, vectors)
        with self._reaching(f"write {len(points)} passages"):
            self.client.upsert(self.collection, points=points, wait=True)

    def replace(self, passages: Sequence[Passage], vectors: np.ndarray, stale: Sequence[str]) -> None:
        """Upsert ``passages`` and delete the ``stale`` ids in one request, which Qdrant applies in order: a writer
        killed before it leaves the documents as they were, after it as they are now."""
        from qdrant_client import models

        check_write(self.where, self.fields, passages, vectors)
        if not passages:
            self.delete(stale)
            return
        points = self._points(passages, vectors)
        operations: list[Any] = [models.UpsertOperation(upsert=models.PointsList(points=points))]
        if stale:
            operations.append(models.DeleteOperation(delete=models.PointIdsList(points=[point_id(i) for i in stale])))
        with self._reaching(f"write {len(points)} passages"):
            self.client.batch_update_points(self.collection, update_operations=operations, wait=True)

    def _points(self, passages: Sequence[Passage], vectors: np.ndarray) -> list[models.PointStruct]:
        """The points a write sends (the collection created, its payload indexes made, on the first)."""
        from qdrant_client import models

        self._create(int(vectors.shape[1]))
        payloads = [self._payload(p) for p in passages]
        self._index_fields({key for payload in payloads for key in payload if key.startswith("_tr_")})
        return [models.PointStruct(id=point_id(p.id), vector=v.astype("float32").tolist(), payload=payload)
                for p, v, payload in zip(passages, vectors, payloads, strict=True)]

    def delete(self, ids: Sequence[str]) -> None:
        from qdrant_client import models

        if not ids or not self._exists():
            return
        with self._reaching("delete"):
            self.client.delete(self.collection, models.PointIdsList(points=[point_id(i) for i in ids]), wait=True)

    def scan(self) -> Iterator[tuple[str, dict[str, Any]]]:
        if not self._exists():
            return
        offset: Any = None
        while True:
            with self._reaching("read the passages' metadata"):
                points, offset = self.client.scroll(self.collection, limit=SCAN_PAGE, offset=offset,
                                                    with_payload=True, with_vectors=False)
            for point in points:
                payload = dict(point.payload or {})
                held = str(payload.pop("id", point.id))
                yield held, {k: v for k, v in payload.items() if k not in OWN_FIELDS and not k.startswith("_tr_")}
            if offset is None:
                return

    def search(self, vector: np.ndarray, k: int, where: Where | None = None) -> list[StoredHit]:
        refused = self.unsupported(where) if where is not None else None
        if refused is not None:
            raise StoreError(refused)
        name, size = self._vector_params()
        query = np.asarray(vector, dtype="float32").reshape(-1)
        if query.shape[0] != size:
            raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {size} dimensions, the "
                             f"query has {query.shape[0]}")
        with self._reaching("search"):
            found = self.client.query_points(self.collection, query=query.tolist(), using=name, limit=k,
                                             query_filter=qdrant_filter(clauses(where)) if where else None,
                                             with_payload=True).points
        return [StoredHit(passage=self._passage(point.id, point.payload or {}), score=float(point.score))
                for point in found]

    def unsupported(self, where: Where) -> str | None:
        if not self._marked():
            return (f"{self.where}: collection {self.collection!r} was not written by tanglerag and holds no filter "
                    f"fields, so the filter {where.text.strip()!r} cannot be pushed down: ask without it")
        try:
            found = clauses(where)
        except Refused as exc:
            return f"{self.where}: {exc}"
        for clause in found:
            if clause.text_field is not None and self._holds(clause.text_field):
                return (f"{self.where}: {clause.condition!r} would order the text values of that key as text, which "
                        "a Qdrant filter cannot")
        return None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None

    # -- collection ---------------------------------------------------------------------
    def _create(self, size: int) -> None:
        from qdrant_client import models

        if self._exists():
            held = self._vector_params()[1]
            if held != size:
                raise StoreError(f"{self.where}: collection {self.collection!r} holds vectors of {held} dimensions, "
                                 f"these have {size}: use the collection's embedder, or another collection")
            if not self._marked() and self.count() > 0:
                raise StoreError(not_ours(self.where, self.collection))
            return
        with self._reaching("create the collection"):
            mark: dict[str, Any] = {"filter_fields": 1, **({"embedder": self.embedder} if self.embedder else {})}
            self.client.create_collection(self.collection, metadata={MARK: mark},
                                          vectors_config=models.VectorParams(size=size,
                                                                             distance=models.Distance.COSINE))

    def _index_fields(self, names: set[str]) -> None:
        """Payload indexes on the filter fields not indexed yet (a server only: local mode has none)."""
        from qdrant_client import models

        kinds = {"integer": models.PayloadSchemaType.INTEGER, "float": models.PayloadSchemaType.FLOAT,
                 "keyword": models.PayloadSchemaType.KEYWORD, "bool": models.PayloadSchemaType.BOOL}
        todo = sorted((names | set(_INDEXED)) - self._indexed) if not self.local else []
        for name in todo:
            with self._reaching(f"index the payload field {name}"):
                self.client.create_payload_index(self.collection, name, kinds[_field_kind(name)], wait=True)
            self._indexed.add(name)

    def _vector_params(self) -> tuple[str | None, int]:
        """The vector's name (None: the collection's one unnamed vector) and size; a distance other than cosine
        or dot (on unit vectors, the same ranking) is refused."""
        from qdrant_client import models

        vectors = self._info().config.params.vectors
        named = dict(vectors) if isinstance(vectors, Mapping) else {None: vectors}
        if len(named) != 1:
            raise StoreError(f"{self.where}: collection {self.collection!r} has {len(named)} named vectors "
                             f"({', '.join(map(str, named))}); tanglerag reads a collection of one")
        name, params = next(iter(named.items()))
        if params is None or params.distance not in (models.Distance.COSINE, models.Distance.DOT):
            raise StoreError(f"{self.where}: collection {self.collection!r} ranks by "
                             f"{getattr(params, 'distance', 'nothing')}; tanglerag reads cosine (or dot) collections")
        return name, int(params.size)

    def written_by(self) -> str | None:
        if not self._exists():
            return None
        mark = (self._info().config.metadata or {}).get(MARK)
        return str(mark["embedder"]) if isinstance(mark, dict) and mark.get("embedder") else None

    def _marked(self) -> bool:
        metadata = self._info().config.metadata or {}
        return isinstance(metadata.get(MARK), dict)

    def _holds(self, name: str) -> bool:
        """Whether any point holds a value in the payload field ``name``."""
        from qdrant_client import models

        anything = models.Filter(must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key=name))])
        with self._reaching("count"):
            return int(self.client.count(self.collection, count_filter=anything, exact=False).count) > 0

    # -- payloads -------------------------------------------------------------------------
    def _payload(self, passage: Passage) -> dict[str, Any]:
        metadata = passage.model_dump(mode="json")["metadata"]
        clash = sorted(key for key in metadata if key in OWN_FIELDS or key.startswith("_tr_"))
        if clash:
            raise StoreError(f"{self.where}: passage {passage.id!r} has metadata {clash[0]!r}, a name the store keeps "
                             "for itself")
        try:
            fields = filter_fields(metadata, self.tiers)
        except InputError as exc:
            raise StoreError(f"{self.where}: passage {passage.id!r}: {exc}") from None
        return {**metadata, "id": passage.id, "text": passage.text, "title": passage.title, **fields,
                **meta_fields(metadata)}

    def _passage(self, point_id: Any, payload: Mapping[str, Any]) -> Passage:
        """The passage a point holds, read through ``store.fields``."""
        return read_record(payload, self.fields, what=f"{self.where}: point {point_id} of collection "
                           f"{self.collection!r}", fallback_id=str(point_id))


def point_id(passage_id: str) -> str:
    """The point id of a passage: a UUID made from its id, the same on every write."""
    return str(uuid.uuid5(ID_NAMESPACE, passage_id))


def qdrant_filter(found: list[FilterClause]) -> models.Filter:
    """Every clause as one Qdrant filter: each must hold."""
    from qdrant_client import models

    must: list[Any] = []
    for clause in found:
        part: dict[str, Any] = {}
        if clause.present is not None:
            part["must_not"] = [models.IsEmptyCondition(is_empty=models.PayloadField(key=clause.present))]
        if clause.any_of:
            part["should"] = [_condition(test) for test in clause.any_of]
        if clause.none_of:
            part.setdefault("must_not", []).extend(_condition(test) for test in clause.none_of)
        must.append(models.Filter(**part))
    return models.Filter(must=must)


def _condition(test: Test) -> models.FieldCondition:
    from qdrant_client import models

    if isinstance(test, OneOf):
        match = (models.MatchValue(value=test.values[0]) if len(test.values) == 1
                 else models.MatchAny(any=list(test.values)))
        return models.FieldCondition(key=test.field, match=match)
    return models.FieldCondition(key=test.field, range=_range(test))


def _range(test: Between) -> models.Range:
    from qdrant_client import models

    return models.Range(gt=test.low if test.low_open else None, gte=None if test.low_open else test.low,
                        lt=test.high if test.high_open else None, lte=None if test.high_open else test.high)


def _field_kind(name: str) -> str:
    if name in _INDEXED:
        return _INDEXED[name]
    return {"n": "float", "t": "keyword", "h": "bool"}[name.removeprefix("_tr_meta_")[0]]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""
