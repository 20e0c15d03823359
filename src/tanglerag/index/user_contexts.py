"""Per-user store of short context statements (profile facts, situation, recent events).

Each user is one JSON file plus its embedding matrix, in a folder of its own: a query for
one user can only ever load that user's files. Writes go to a temporary file and are renamed,
so an interrupted write leaves the previous state intact.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.errors import ContextStoreError
from tanglerag.fileio import PRIVATE_MODE, atomic_write_npy, atomic_write_text, file_lock
from tanglerag.users import UserContext, check_user_id

log = logging.getLogger(__name__)


class UserContexts(BaseModel):
    """One user's file (``contexts.json``): the statements about them and the identity of the embedder that embedded
    them (``embeddings.embedder_identity``)."""

    user: str
    embedding_model: str
    contexts: list[UserContext] = Field(default_factory=list)


class UserContextStore:
    """The statements about each user, one folder per user; personal retrieval pairs them with passages."""

    def __init__(self, root: Path, embedder: TextEmbedder) -> None:
        self.root = root
        self.embedder = embedder

    def _folder(self, user: str) -> Path:
        return self.root / check_user_id(user)

    def _read(self, user: str) -> UserContexts:
        path = self._folder(user) / "contexts.json"
        if not path.exists():
            return UserContexts(user=user, embedding_model=embedder_identity(self.embedder))
        try:
            data = UserContexts.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise ContextStoreError(f"{path} is damaged ({exc.errors()[0]['msg']}); restore it from a backup, or "
                                    "move it aside to start this user afresh") from exc
        if data.embedding_model != embedder_identity(self.embedder):
            raise ContextStoreError(f"contexts of user {user!r} were embedded with {data.embedding_model!r}, "
                                    f"not the configured {embedder_identity(self.embedder)!r}")
        return data

    def _write(self, data: UserContexts, vectors: np.ndarray) -> None:
        folder = self._folder(data.user)
        atomic_write_npy(folder / "vectors.npy", vectors, PRIVATE_MODE)
        atomic_write_text(folder / "contexts.json", data.model_dump_json(indent=2), PRIVATE_MODE)

    def add(self, user: str, texts: list[str]) -> list[UserContext]:
        texts = [t.strip() for t in texts]
        if not texts or any(not t for t in texts):
            raise ContextStoreError("a context statement must not be empty")
        vectors = self.embedder.embed(texts)  # outside the lock: the slow part, and it needs nothing stored
        with self._lock(user):  # read under the lock, so a concurrent writer's statements are kept
            data, stored = self.vectors(user)
            added = [UserContext(id=uuid.uuid4().hex[:8], text=t) for t in texts]
            self._write(UserContexts(user=user, embedding_model=embedder_identity(self.embedder), contexts=data + added),
                        np.concatenate([stored, vectors]) if data else vectors)
        return added

    def list(self, user: str) -> list[UserContext]:
        return self._read(user).contexts

    def remove(self, user: str, context_id: str) -> None:
        if not (self._folder(user) / "contexts.json").exists():  # checked before the lock creates the folder
            raise ContextStoreError(f"user {user!r} has no context with id {context_id!r}")
        with self._lock(user):
            contexts, vectors = self.vectors(user)
            keep = [i for i, c in enumerate(contexts) if c.id != context_id]
            if len(keep) == len(contexts):
                raise ContextStoreError(f"user {user!r} has no context with id {context_id!r}")
            self._write(UserContexts(user=user, embedding_model=embedder_identity(self.embedder),
                                     contexts=[contexts[i] for i in keep]), vectors[keep])

    def _lock(self, user: str) -> AbstractContextManager[None]:
        self._folder(user).mkdir(mode=0o700, parents=True, exist_ok=True)  # private before anything is written
        return file_lock(self._folder(user) / ".lock")

    def vectors(self, user: str) -> tuple[builtins.list[UserContext], np.ndarray]:
        """The user's statements and their stored embeddings (re-embedded if the file is missing)."""
        data = self._read(user)
        path = self._folder(user) / "vectors.npy"
        if path.exists():
            try:
                vectors = np.load(path, allow_pickle=False)
            except (ValueError, OSError, EOFError) as exc:  # derived data: the texts are the record, embed them again
                log.warning("%s is damaged (%s); embedding user %r's contexts again", path, exc, user)
            else:
                if vectors.shape == (len(data.contexts), self.embedder.dimension):
                    return data.contexts, vectors
        return data.contexts, self.embedder.embed([c.text for c in data.contexts])


def contexts_as_json(contexts: list[UserContext]) -> str:
    return json.dumps([c.model_dump() for c in contexts], indent=2)
