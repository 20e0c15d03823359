"""``GET /v1/index`` (the manifest) and ``POST /v1/index/documents`` (JSONL or uploaded files, saved atomically)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request

from tanglerag.errors import InputError
from tanglerag.index.passage_index import read_manifest, store_passages
from tanglerag.ingest import chunk_passages, passages_from_upload
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import AddedDocuments, IndexInfo
from tanglerag.service.state import AdminDep, CallerDep, State
from tanglerag.types import Passage

router = APIRouter(tags=["index"])
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json", "text/plain")
UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "application/x-ndjson": {"schema": {"type": "string", "description": "JSONL: {id, text, title?}"}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}}}


@router.get("/v1/index", response_model=IndexInfo)
async def index_info(_: CallerDep, state: State) -> IndexInfo:
    """The manifest of the index being served."""
    folder = state.runtime.index_dir
    if folder is None or not state.has_index():
        raise ServiceError(404, "no index yet: POST documents to /v1/index/documents first")
    return IndexInfo(manifest=read_manifest(folder))


@router.post("/v1/index/documents", response_model=AddedDocuments, openapi_extra=UPLOAD_BODY)
async def add_documents(request: Request, _: AdminDep, state: State) -> AddedDocuments:
    """Add passages (a JSONL body, or uploaded .jsonl/.txt/.md files) to the index; saved atomically."""
    folder = state.runtime.index_dir
    if folder is None:
        raise ServiceError(409, "the service was started without --index: it has nowhere to add documents")
    passages = await _uploaded_passages(request)
    rt = state.runtime
    cfg = rt.settings.index
    chunks = chunk_passages(passages, "upload", chunk_size=cfg.chunk_words, chunk_overlap=cfg.chunk_overlap)
    async with state.index_writes:
        index, added = await asyncio.to_thread(store_passages, folder, chunks, rt.embedder, cfg)
        rt.replace_index(index)
    return AddedDocuments(received=len(chunks), added=added, already_present=len(chunks) - added,
                          total=index.manifest().count)


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
            passages += passages_from_upload(upload.filename or "upload.jsonl", await upload.read())
        return passages
    if kind in JSONL_TYPES or not kind:
        return passages_from_upload("body.jsonl", await request.body())
    raise ServiceError(415, f"unsupported content type {kind!r}: send JSONL (application/x-ndjson) or "
                            "multipart/form-data files")
