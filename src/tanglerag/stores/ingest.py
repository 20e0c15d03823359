"""``tanglerag index CORPUS --store NAME``: the corpus read and chunked as for the embedded index, each batch embedded
with the configured embedder and written to the store in one upsert (its filter fields with it).

What a failure leaves: every batch before it, written whole; none of the batch that failed (one request, which the
store applies or refuses). Passages are keyed by id, so running the same command again rewrites what was written and
adds the rest: nothing is duplicated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from tanglerag.embeddings import TextEmbedder
from tanglerag.index.passage_index import embed_text
from tanglerag.stores.base import VectorStore
from tanglerag.stores.factory import check_dimension
from tanglerag.types import Passage

BATCH = 256
"""Passages embedded and written at a time: a request of a few MB to a server, a few seconds of embedding."""


def write_passages(store: VectorStore, passages: Iterable[Passage], embedder: TextEmbedder, collection: str, *,
                   batch: int = BATCH, progress: Callable[[int], None] | None = None) -> int:
    """Embed and upsert ``passages`` batch by batch; returns how many were written. A collection of vectors of
    another size is refused before anything is embedded."""
    check_dimension(store, embedder, collection)
    written = 0
    for chunk in _batches(passages, batch):
        store.upsert(chunk, embedder.embed([embed_text(p) for p in chunk]))
        written += len(chunk)
        if progress is not None:
            progress(len(chunk))
    return written


def _batches(passages: Iterable[Passage], size: int) -> Iterator[list[Passage]]:
    items = iter(passages)
    while chunk := list(islice(items, size)):
        yield chunk
