"""Source independence without the model: copies, mirrors and versions of one document count as one witness.

Two passages are one document when their normalised texts are near-identical (rapidfuzz's ratio, an edit-distance
similarity, at least ``ledger.duplicate_similarity``): a copy if they say the same, versions if a fact differs, and
then their differing answers are about the same thing by construction. Passages of one named ``source`` are one
witness too, though not one document: a site may write about two people of one name. Single linkage: a copy of a copy
is the same document.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from tanglerag.conflicts import DocumentMeta
from tanglerag.text import normalize_answer
from tanglerag.types import RetrievedPassage


def file_of(hit: RetrievedPassage) -> object:
    """The file (``path``) or record (``source_id``) a passage is a chunk of, else the passage itself: its chunks are
    parts of one document, whatever their texts."""
    return hit.passage.metadata.get("path") or hit.passage.metadata.get("source_id") or hit.passage.id


@dataclass(frozen=True)
class Independence:
    """Passage id -> its document (copies and versions share one) and -> its witness (a document, or every
    document of one source)."""

    document: dict[str, int]
    witness: dict[str, int]

    def copies(self, dates: dict[str, datetime.date]) -> list[list[str]]:
        """Passages that are copies or versions of one document, oldest first where dated (undated last)."""
        groups: dict[int, list[str]] = {}
        for pid, doc in self.document.items():
            groups.setdefault(doc, []).append(pid)
        ordered = [sorted(ids, key=lambda p: (p not in dates, dates.get(p, datetime.date.min)))
                   for ids in groups.values()]
        return [ids for ids in ordered if len(ids) > 1]

    def witnesses(self, passage_ids: list[str]) -> int:
        return len({self.witness[p] for p in passage_ids})


def components(n: int, links: list[tuple[int, int]]) -> list[int]:
    """Connected components of ``n`` nodes, each named by its smallest member (a small union-find)."""
    root = list(range(n))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for a, b in links:
        ra, rb = find(a), find(b)
        root[max(ra, rb)] = min(ra, rb)
    return [find(i) for i in range(n)]


COMPARED_CHARS = 4000
"""How much of each passage is compared: an edit distance grows with the product of two texts' lengths, and a
passage of 2 MB (a file no chunker cut) took minutes; a chunk is far shorter, and copies differ within this much."""


def independence(passages: list[RetrievedPassage], metas: dict[str, DocumentMeta],
                 similarity: float) -> Independence:
    ids = [hit.passage.id for hit in passages]
    texts = [normalize_answer(hit.passage.text[:COMPARED_CHARS]) for hit in passages]
    scores = process.cdist(texts, texts, scorer=fuzz.ratio, score_cutoff=similarity * 100)
    same_text = [(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids)) if scores[i][j] > 0]
    sources = [metas[p].source for p in ids]
    same_source = [(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids))
                   if sources[i] is not None and sources[i] == sources[j]]
    document = components(len(ids), same_text)
    witness = components(len(ids), same_text + same_source)
    return Independence(document=dict(zip(ids, document, strict=True)), witness=dict(zip(ids, witness, strict=True)))
