"""What gets indexed: a corpus file or folder, or passages already in hand, chunked as the index settings say.

``tanglerag index`` and the Python API both read their input through ``corpus_reader`` and hand it to
``build_streaming`` or ``add_streaming``, so a corpus is chunked, checked and streamed the same way whichever
of them indexes it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from tanglerag.config import IndexConfig
from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.ingest import stream_chunks, stream_corpus
from tanglerag.types import Passage

Corpus = str | os.PathLike[str] | Sequence[Passage]
"""A JSONL file (``{"id", "title", "text", ...}`` a line), a folder of .txt/.md files, a single .txt/.md file,
or passages built in Python."""

CorpusReader = Callable[[], Iterator[Passage]]
"""Reads the corpus from its start on each call: a streamed add passes over it twice (check, then write)."""


def corpus_reader(corpus: Corpus, config: IndexConfig, *, skip_bad: bool = False,
                  tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS) -> CorpusReader:
    """The corpus's chunks, ``config.chunk_words`` words each (overlapping by ``config.chunk_overlap``; a file's
    chunks have ``config.min_chunk_words`` at least, ``loaders.chunking``); a file is re-read on each call rather
    than held in memory. ``skip_bad`` warns about malformed JSONL lines and skips them instead of refusing the
    file. ``tiers``: the authority tier names documents may give (``where.authority_tiers`` of the settings); a
    document with another, or a date that cannot be read, is refused by name."""
    size, overlap, least = config.chunk_words, config.chunk_overlap, config.min_chunk_words
    if isinstance(corpus, str | os.PathLike):
        return functools.partial(stream_corpus, Path(corpus), chunk_size=size, chunk_overlap=overlap, skip_bad=skip_bad,
                                 tiers=tiers, min_chunk_words=least)
    passages = list(corpus)  # a generator would be spent after the first pass
    return functools.partial(stream_chunks, passages, "in memory", chunk_size=size, chunk_overlap=overlap, tiers=tiers,
                             min_chunk_words=least)
