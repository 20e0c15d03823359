"""The index over HTTP: ``GET /v1/index`` (the manifest); documents added (JSONL or files), replaced (``PUT``) and
removed (``DELETE``). Every write holds the index lock, saves a complete new version and swaps it in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam

from tanglerag.errors import InputError
from tanglerag.index.documents import DocumentChanges, UnknownDocuments
from tanglerag.index.passage_index import PassageIndex, read_manifest, remove_documents, store_passages
from tanglerag.ingest import chunk_passages, passages_from_upload
from tanglerag.service.bodies import first_unencodable, shown
from tanglerag.service.errors import ServiceError, client_message
from tanglerag.service.schemas import AddedDocuments, DocumentIn, IndexInfo, RemovedDocuments, error_responses
from tanglerag.service.state import AdminDep, CallerDep, ServiceState, State
from tanglerag.types import Passage
from tanglerag.where import authority_tiers

router = APIRouter(tags=["index"], responses=error_responses(401))
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json", "text/plain")
UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "application/x-ndjson": {"schema": {"type": "string", "description": (
        "JSONL: {id, text, title?, date?, source?, authority?, meta?, ...}; or files: .txt, .md (YAML front matter "
        "read as metadata), .pdf, .html, .docx")}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}}}
WRITE_ERRORS = error_responses(400, 403, 409, 413)
DocId = Annotated[str, PathParam(description="a record's id, or the path of an uploaded file (it may hold '/')")]


@router.get("/v1/index", response_model=IndexInfo, responses=error_responses(404))
async def index_info(_: CallerDep, state: State) -> IndexInfo:
    """The manifest of the index being served."""
    folder = state.runtime.index_dir
    if folder is None or not state.has_index():
        raise ServiceError(404, "no index yet: POST documents to /v1/index/documents first")
    return IndexInfo(manifest=read_manifest(folder))


@router.post("/v1/index/documents", response_model=AddedDocuments, openapi_extra=UPLOAD_BODY,
             responses=WRITE_ERRORS | error_responses(415))
async def add_documents(request: Request, _: AdminDep, state: State, replace: Annotated[bool, Query(
        description="replace documents whose id is known but whose text or metadata changed (else 409 naming them)")] = False,
                        ) -> AddedDocuments:
    """Add documents (a JSONL body, or uploaded .jsonl/.txt/.md/.pdf/.html/.docx files; each file's chunks keep its
    pages and sections) to the index; saved atomically. A file that cannot be read is a 400 naming it."""
    return await _added(state, await _uploaded_passages(request), replace)


@router.put("/v1/index/documents/{doc_id:path}", response_model=AddedDocuments, responses=WRITE_ERRORS)
async def put_document(doc_id: DocId, body: DocumentIn, _: AdminDep, state: State) -> AddedDocuments:
    """Create or replace one document (all of its chunks) under this id."""
    return await _added(state, [Passage(id=doc_id, title=body.title, text=body.text, metadata=body.metadata)], True)


@router.delete("/v1/index/documents/{doc_id:path}", response_model=RemovedDocuments,
               responses=error_responses(403, 404, 409))
async def delete_document(doc_id: DocId, _: AdminDep, state: State) -> RemovedDocuments:
    """Remove one document (every chunk of it) from the index; saved atomically."""
    if not state.has_index():
        raise ServiceError(404, "no index yet: nothing to remove")
    try:
        index, changes = await _written(state, lambda folder, rt: remove_documents(folder, [doc_id], rt.embedder))
    except UnknownDocuments as exc:
        raise ServiceError(404, client_message(exc, state.redact)) from None
    return RemovedDocuments(removed=changes.removed, total=index.manifest().count)


async def _added(state: ServiceState, passages: list[Passage], replace: bool) -> AddedDocuments:
    cfg = state.runtime.settings.index
    chunks = chunk_passages(passages, "upload", chunk_size=cfg.chunk_words, chunk_overlap=cfg.chunk_overlap,
                            tiers=authority_tiers(state.runtime.settings))  # metadata checked before any write
    index, changes = await _written(state, lambda folder, rt: store_passages(folder, chunks, rt.embedder, cfg,
                                                                             replace=replace))
    return AddedDocuments(received=len(chunks), added=changes.added, already_present=changes.unchanged,
                          replaced=changes.replaced, removed=changes.removed, total=index.manifest().count)


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


async def _uploaded_passages(request: Request) -> list[Passage]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await request.form()
        uploads = form.getlist("files")
        if not uploads:
            raise InputError("multipart upload holds no 'files' field")
        passages: list[Passage] = []
        for upload in uploads:
            if isinstance(upload, str):
                raise InputError("'files' must be uploaded files, not text fields")
            passages += _text_only(passages_from_upload(upload.filename or "upload.jsonl", await upload.read()))
        return passages
    if kind in JSONL_TYPES or not kind:
        return _text_only(passages_from_upload("body.jsonl", await request.body()))
    raise ServiceError(415, f"unsupported content type {kind!r}: send JSONL (application/x-ndjson) or "
                            "multipart/form-data files")


def _text_only(passages: list[Passage]) -> list[Passage]:
    """The passages of an upload, refused when a record holds a lone surrogate (a JSON escape such as ``\\ud800``,
    which is not text): ``service.bodies`` checks a request's body, this an uploaded file's."""
    for passage in passages:
        where = first_unencodable(passage.model_dump())
        if where is not None:
            raise InputError(f"document '{shown(passage.id)}': {where} is not valid Unicode text (a lone surrogate "
                             "such as \\ud800); send UTF-8 text")
    return passages
