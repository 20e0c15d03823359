"""CDIT's determiner (paper 003, step 2): has a close enough query been judged before?

It remembers, per index, each judged query with its embedding and the verdict on every passage judged
for it. A new query whose cosine similarity to a remembered one reaches the threshold reuses those
verdicts for the passages they cover, so only passages never judged for such a query cost a judgment.
Stored beside the trim log (``cdit_queries.jsonl`` + ``cdit_queries.npy``, each written then renamed;
a vector file that does not match the records is rebuilt from the query texts).

>>> memory = QueryMemory(Path("my-index"), embedder, threshold=0.95)  # doctest: +SKIP
>>> memory.recall("Who switched on the radio?")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import BaseModel, ValidationError

from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import IndexStoreError
from tanglerag.fileio import atomic_write_npy, atomic_write_text, file_lock


class JudgedQuery(BaseModel):
    query: str
    verdicts: dict[str, bool | None]  # passage id -> consistent (None: unreadable)


class CloseJudgedQuery(BaseModel):
    """A remembered query close enough to reuse: its text, its cosine similarity to the new one, its verdicts."""

    query: str
    similarity: float
    verdicts: dict[str, bool | None]


class QueryMemory:
    """Remembered judgments; in memory only when ``folder`` is None (an evaluation's pooled index)."""

    def __init__(self, folder: Path | None, embedder: TextEmbedder, threshold: float) -> None:
        self.folder = folder
        self.embedder = embedder
        self.threshold = threshold
        self._queries: list[JudgedQuery] | None = None
        self._vectors = np.zeros((0, 0), dtype="float32")

    def _load(self) -> list[JudgedQuery]:
        if self._queries is not None:
            return self._queries
        self._queries = []
        if self.folder is not None and (self.folder / "cdit_queries.jsonl").exists():
            lines = (self.folder / "cdit_queries.jsonl").read_text(encoding="utf-8").splitlines()
            try:
                self._queries = [JudgedQuery.model_validate_json(line) for line in lines if line.strip()]
            except ValidationError as exc:
                raise IndexStoreError(f"{self.folder / 'cdit_queries.jsonl'} is damaged: delete it to start over "
                                      f"({exc.errors()[0]['msg']})") from exc
            path = self.folder / "cdit_queries.npy"
            vectors = np.load(path) if path.exists() else None
            if vectors is None or len(vectors) != len(self._queries):
                vectors = self.embedder.embed([q.query for q in self._queries]) if self._queries else None
            self._vectors = vectors if vectors is not None else self._vectors
        return self._queries

    def __len__(self) -> int:
        return len(self._load())

    def recall(self, query: str, vector: np.ndarray | None = None) -> CloseJudgedQuery | None:
        """The most similar remembered query at or above the threshold, with its verdicts."""
        queries = self._load()
        if not queries:
            return None
        vector = self.embedder.embed([query])[0] if vector is None else vector
        similarities = self._vectors @ vector
        best = int(np.argmax(similarities))
        if float(similarities[best]) < self.threshold:
            return None
        return CloseJudgedQuery(query=queries[best].query, similarity=float(similarities[best]),
                                verdicts=queries[best].verdicts)

    def remember(self, query: str, verdicts: dict[str, bool | None], vector: np.ndarray | None = None) -> None:
        vector = self.embedder.embed([query])[0] if vector is None else vector
        if self.folder is None:
            self._append(self._load(), query, verdicts, vector)
            return
        with file_lock(self.folder / ".trim.lock"):  # re-read inside the lock: another writer's queries stay
            self._queries = None
            queries = self._append(self._load(), query, verdicts, vector)
            atomic_write_npy(self.folder / "cdit_queries.npy", self._vectors)
            atomic_write_text(self.folder / "cdit_queries.jsonl", "".join(q.model_dump_json() + "\n" for q in queries))

    def _append(self, queries: list[JudgedQuery], query: str, verdicts: dict[str, bool | None],
                vector: np.ndarray) -> list[JudgedQuery]:
        queries.append(JudgedQuery(query=query, verdicts=verdicts))
        self._vectors = np.vstack([self._vectors, vector[None, :]]) if len(self._vectors) else vector[None, :]
        return queries
