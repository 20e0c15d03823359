"""BM25 over passage texts (bm25s). Rebuilt on add: BM25 statistics are corpus-wide.

Words are stemmed (PyStemmer's English Snowball stemmer, through bm25s): "acknowledged" finds "acknowledge", as a
reader expects of a keyword search. The choice is saved with the BM25 part (``stemmer.txt``) and queries are stemmed
the same way; a part saved before stemming has no such file and stays unstemmed.

bm25s is imported where it is used: with numba and scipy it costs ~0.5 s at start-up, which every CLI command and
worker process would pay even when no index of theirs has a BM25 part."""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import bm25s


def import_bm25s() -> ModuleType:
    """bm25s, imported on first use. Its import sets its own logger to DEBUG, which would print its notes to every
    CLI user; the level its logger had before (the CLI's WARNING, or unset) is put back."""
    logger = logging.getLogger("bm25s")
    level = logger.level
    import bm25s

    logger.setLevel(level)
    return cast(ModuleType, bm25s)


STEMMER = "english"
"""The Snowball stemmer a new BM25 part is built with."""


def _stemmer(language: str | None) -> Any:
    """PyStemmer's stemmer for ``language`` (None: no stemming)."""
    if language is None:
        return None
    import Stemmer

    return Stemmer.Stemmer(language)


class BM25Index:
    def __init__(self, model: bm25s.BM25, size: int, stemmer: str | None = None) -> None:
        self._model = model
        self.size = size
        self.stemmer = stemmer
        self._stem = _stemmer(stemmer)

    @classmethod
    def build(cls, texts: list[str], *, stemmer: str | None = STEMMER) -> BM25Index:
        """``stemmer``: the Snowball language words are stemmed in (None: as written)."""
        bm25s = import_bm25s()
        model = bm25s.BM25()
        model.index(bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(stemmer), show_progress=False),
                    show_progress=False)
        return cls(model, len(texts), stemmer)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        k = min(k, self.size)
        if k == 0:
            return []
        tokens = import_bm25s().tokenize([query], stopwords="en", stemmer=self._stem, show_progress=False)
        if not tokens.vocab:  # a query of stopwords only matches nothing
            return []
        ids, scores = self._model.retrieve(tokens, k=k, show_progress=False)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def save(self, folder: Path) -> None:
        self._model.save(str(folder))
        np.save(folder / "size.npy", np.array([self.size]))
        if self.stemmer is not None:
            (folder / "stemmer.txt").write_text(self.stemmer)

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> BM25Index:
        """``mmap``: the score matrix stays on disk (bm25s memory-maps its arrays), read as queries touch it."""
        stemmer = (folder / "stemmer.txt").read_text().strip() if (folder / "stemmer.txt").exists() else None
        return cls(import_bm25s().BM25.load(str(folder), mmap=mmap), int(np.load(folder / "size.npy")[0]), stemmer)
