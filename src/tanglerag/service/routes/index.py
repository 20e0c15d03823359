"""The index over HTTP: ``GET /v1/index`` (the manifest); documents added (JSONL or files), replaced (``PUT``) and
removed (``DELETE``). Every write holds the index lock, saves a complete new version and swaps it in.

Reading what was sent (a loader parsing a file, chunking) runs in a worker thread, one upload at a time, within
``service.upload_timeout_s``: a 100,000-page PDF must not hold the event loop, where every other request (``/healthz``
included) waits. A file a loader cannot read is a 400 naming it, whatever the loader raised; one not read in time is
a 413 naming it (its thread keeps the reading slot until it ends, so a second such file cannot start beside it)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam

from tanglerag.errors import InputError, TangleragError
from tanglerag.index.documents import DocumentChanges, UnknownDocuments
from tanglerag.index.passage_index import PassageIndex, read_manifest, remove_documents, store_passages
from tanglerag.ingest import chunk_passages, passages_from_upload, upload_path
from tanglerag.loaders.base import UnreadableFile
from tanglerag.service.bodies import first_refused, shown
from tanglerag.service.errors import ServiceError, client_message
from tanglerag.service.schemas import AddedDocuments, DocumentIn, IndexInfo, RemovedDocuments, error_responses
from tanglerag.service.state import AdminDep, CallerDep, ServiceState, State, WritableDep
from tanglerag.types import Passage
from tanglerag.where import authority_tiers

log = logging.getLogger(__name__)
T = TypeVar("T")
router = APIRouter(tags=["index"], responses=error_responses(401))
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json", "text/plain")
UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "application/x-ndjson": {"schema": {"type": "string", "description": (
        "JSONL: {id, text, title?, date?, source?, authority?, meta?, ...}; or files: .txt, .md (YAML front matter "
        "read as metadata), .pdf, .html, .docx")}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}}}
WRITE_ERRORS = error_responses(400, 403, 409, 413, 429)
DocId = Annotated[str, PathParam(description="a record's id, or the path of an uploaded file (it may hold '/')")]


@router.get("/v1/index", response_model=IndexInfo, responses=error_responses(404))
async def index_info(_: CallerDep, state: State) -> IndexInfo:
    """The manifest of the index being served."""
    folder = state.runtime.index_dir
    if folder is None or not state.has_index():
        raise ServiceError(404, "no index yet: POST documents to /v1/index/documents first")
    loaded = state.runtime.loaded_index
    return IndexInfo(manifest=read_manifest(folder), serving=loaded.version if loaded is not None else None)


@router.post("/v1/index/documents", response_model=AddedDocuments, openapi_extra=UPLOAD_BODY,
             responses=WRITE_ERRORS | error_responses(415), dependencies=[WritableDep])
async def add_documents(request: Request, _: AdminDep, state: State, replace: Annotated[bool, Query(
        description="replace documents whose id is known but whose text or metadata changed (else 409 naming them)")] = False,
                        ) -> AddedDocuments:
    """Add documents (a JSONL body, or uploaded .jsonl/.txt/.md/.pdf/.html/.docx files; each file's chunks keep its
    pages and sections) to the index; saved atomically. A file that cannot be read is a 400 naming it, one not read
    within service.upload_timeout_s a 413."""
    files = await _uploaded_files(request)
    reading = _Reading()
    return await _added(state, await _off_loop(state, reading, lambda: _chunks(state, _read(files, reading))), replace)


@router.put("/v1/index/documents/{doc_id:path}", response_model=AddedDocuments, responses=WRITE_ERRORS,
            dependencies=[WritableDep])
async def put_document(doc_id: DocId, body: DocumentIn, _: AdminDep, state: State) -> AddedDocuments:
    """Create or replace one document (all of its chunks) under this id."""
    passage = Passage(id=doc_id, title=body.title, text=body.text, metadata=body.metadata)
    return await _added(state, await _off_loop(state, _Reading(doc_id), lambda: _chunks(state, [passage])), True)


@router.delete("/v1/index/documents/{doc_id:path}", response_model=RemovedDocuments,
               responses=error_responses(403, 404, 409), dependencies=[WritableDep])
async def delete_document(doc_id: DocId, _: AdminDep, state: State) -> RemovedDocuments:
    """Remove one document (every chunk of it) from the index; saved atomically."""
    if not state.has_index():
        raise ServiceError(404, "no index yet: nothing to remove")
    try:
        index, changes = await _written(state, lambda folder, rt: remove_documents(folder, [doc_id], rt.embedder))
    except UnknownDocuments as exc:
        raise ServiceError(404, client_message(exc, state.redact)) from None
    return RemovedDocuments(removed=changes.removed, total=index.manifest().count)


async def _added(state: ServiceState, chunks: list[Passage], replace: bool) -> AddedDocuments:
    cfg = state.runtime.settings.index
    index, changes = await _written(state, lambda folder, rt: store_passages(folder, chunks, rt.embedder, cfg,
                                                                             replace=replace))
    return AddedDocuments(received=len(chunks), added=changes.added, already_present=changes.unchanged,
                          replaced=changes.replaced, removed=changes.removed, total=index.manifest().count)


def _chunks(state: ServiceState, passages: list[Passage]) -> list[Passage]:
    """The passages chunked, their metadata checked before any write (in the reading thread)."""
    cfg = state.runtime.settings.index
    return chunk_passages(passages, "upload", chunk_size=cfg.chunk_words, chunk_overlap=cfg.chunk_overlap,
                          tiers=authority_tiers(state.runtime.settings), min_chunk_words=cfg.min_chunk_words)


async def _written(state: ServiceState, write: Callable[..., tuple[PassageIndex, DocumentChanges]]
                   ) -> tuple[PassageIndex, DocumentChanges]:
    """Run one index write (in a thread, one at a time) and serve its result from now on."""
    folder: Path | None = state.runtime.index_dir
    if folder is None:
        raise ServiceError(409, "the service was started without --index: it has no index to change")
    async with state.index_writes:
        rt = state.runtime
        index, changes = await asyncio.to_thread(write, folder, rt)
        rt.replace_index(index)
    return index, changes


@dataclass
class _Reading:
    """What an upload's thread is reading now, for the message when it runs past its time, and whether anyone still
    waits for it."""

    file: str = "the upload"
    abandoned: bool = False


async def _off_loop(state: ServiceState, reading: _Reading, work: Callable[[], T]) -> T:
    """``work`` in a worker thread holding the one reading slot, within ``service.upload_timeout_s`` (413 past it,
    naming what it was reading; 429 when an earlier upload still holds the slot that long)."""
    timeout = state.runtime.settings.service.upload_timeout_s
    try:
        await asyncio.wait_for(state.upload_reads.acquire(), timeout)
    except TimeoutError:
        raise ServiceError(429, "busy: an earlier upload is still being read; retry later",
                           {"Retry-After": str(math.ceil(timeout))}) from None
    future = asyncio.get_running_loop().run_in_executor(None, work)
    future.add_done_callback(lambda ended: _released(state, reading, ended))
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except TimeoutError:
        reading.abandoned = True
        raise ServiceError(413, f"{reading.file}: not read within {timeout:g} s (service.upload_timeout_s): send it "
                                "in smaller parts, or ask the operator to raise the bound") from None
    except asyncio.CancelledError:  # the client left
        reading.abandoned = True
        raise


def _released(state: ServiceState, reading: _Reading, ended: asyncio.Future[T]) -> None:
    """The reading slot freed once the thread ends; the failure of a reading nobody waits for any more is read here
    (one INFO line), so asyncio does not log it as never retrieved."""
    state.upload_reads.release()
    failure = None if ended.cancelled() else ended.exception()
    if failure is not None and reading.abandoned:
        log.info("an upload abandoned while %s was read ended with: %s", reading.file, failure)


async def _uploaded_files(request: Request) -> list[tuple[str, bytes]]:
    """The uploaded files (name, bytes), or a JSONL body as the one file ``body.jsonl``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await request.form()
        uploads = form.getlist("files")
        if not uploads:
            raise InputError("multipart upload holds no 'files' field")
        files: list[tuple[str, bytes]] = []
        for upload in uploads:
            if isinstance(upload, str):
                raise InputError("'files' must be uploaded files, not text fields")
            files.append((upload.filename or "upload.jsonl", await upload.read()))
        return files
    if kind in JSONL_TYPES or not kind:
        return [("body.jsonl", await request.body())]
    raise ServiceError(415, f"unsupported content type {kind!r}: send JSONL (application/x-ndjson) or "
                            "multipart/form-data files")


def _read(files: list[tuple[str, bytes]], reading: _Reading) -> list[Passage]:
    """Every file's passages (in the reading thread), each checked as the door checks a JSON body."""
    passages: list[Passage] = []
    for name, data in files:
        reading.file = upload_path(name) or name
        passages += _checked(_loaded(reading.file, name, data))
    reading.file = "the upload"  # chunking all of it
    return passages


def _loaded(shown_as: str, name: str, data: bytes) -> list[Passage]:
    """One file's passages; whatever a loader raises is this file's 400 (a parser's surprise on hostile bytes, a
    plug-in's bug), never a 500: its kind is told, its message (which may hold anything) goes to the log."""
    try:
        return passages_from_upload(name, data)
    except TangleragError:
        raise
    except Exception as exc:
        log.warning("reading the upload %s failed", shown_as, exc_info=True)
        raise UnreadableFile(f"{shown_as}: cannot be read (its loader failed: {type(exc).__name__}; the server's "
                             "log has the details)") from None


def _checked(passages: list[Passage]) -> list[Passage]:
    """The passages of an upload, refused when a record holds a lone surrogate (a JSON escape such as ``\\ud800``,
    which is not text) or a number that is not finite: ``service.bodies`` checks a request's body, this an uploaded
    file's."""
    for passage in passages:
        refused = first_refused(passage.model_dump())
        if refused is not None:
            where, why = refused
            raise InputError(f"document '{shown(passage.id)}': {where} is {why}")
    return passages
