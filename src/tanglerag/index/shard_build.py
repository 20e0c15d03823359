"""Build an index from embedded shards (``index.shards``) on one machine, with memory that does not grow with the
corpus where the index type allows it (issue 53, item 2).

Each shard's passages are a store of their own, copied into the index's store inside SQLite. The vectors are read
from the shards' ``.npy`` files memory-mapped, one shard at a time:

- ``flat``: the index file is written straight from the shards (``faiss_stream.write_flat``): memory holds one shard.
- ``ivfpq``: the lists and codes are trained on a sample read from the shards (the rows the local build samples), the
  codes added shard by shard, and the exact vectors for re-ranking written into the file from the shards
  (``faiss_stream.write_refined``): memory holds the sample, the codes (48 bytes and an 8-byte id a passage at 384
  dimensions: about 1.2 GB at 21M) and one shard.
- ``hnsw`` and ``ivf`` hold every vector in their structure, so they are built as the streamed build builds them.

The file written is the one ``faiss.write_index`` would write, so loading, searching and ``index.mmap`` are as for
any index. A passage id held by two shards is refused through SQLite before the new version is named.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import faiss
import numpy as np

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError, IngestError
from tanglerag.index.faiss_stream import BOUNDED, write_bounded
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.passage_index import faiss_disk_errors, index_lock, write_version
from tanglerag.index.passage_store import FILE as PASSAGES_FILE
from tanglerag.index.passage_store import StoreWriter
from tanglerag.index.shards import (
    PASSAGES,
    VECTORS,
    read_plan,
    shard_damage,
    shard_done,
    shard_file,
    shard_vectors,
    shards_embedder,
)
from tanglerag.index.spool import gather_rows
from tanglerag.index.streaming import dense_from, write_bm25

DENSE = "dense.faiss"
BLOCK = 8192
"""Vectors read from a shard at a time (12 MB at 384 dimensions)."""


class ShardVectors:
    """The shards' vectors, in order, read memory-mapped from their ``.npy`` files (empty shards skipped)."""

    def __init__(self, folder: Path, shards: int) -> None:
        shapes = {f: shard_vectors(f).shape for f in (shard_file(folder, n, VECTORS) for n in range(shards))}
        self.files = [f for f, shape in shapes.items() if shape[0]]
        self.counts = [int(shapes[f][0]) for f in self.files]
        self.count = sum(self.counts)
        self.dim = int(shapes[self.files[0]][1]) if self.files else 0
        for file in self.files:  # one model's vectors: a shard of another would be searched with the wrong queries
            if shapes[file][1] != self.dim:
                raise IndexStoreError(f"{file} holds vectors of {shapes[file][1]} dimensions, {self.files[0].name} of "
                                      f"{self.dim}: the shards were embedded by different models; remove the shard's "
                                      f"files ({file.name.split('.')[0]}.*) and run the command again")

    def blocks(self) -> Iterator[np.ndarray]:
        """Every vector in order, ``BLOCK`` rows at a time read from the files (not mapped: pages of a mapping stay
        resident until it is closed, so a mapped shard would count whole in the build's memory)."""
        for file in self.files:
            with file.open("rb") as fh:
                version = np.lib.format.read_magic(fh)
                header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                          else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = header(fh)
                if fortran or len(shape) != 2:
                    raise IndexStoreError(f"{file}: not a row-major matrix of vectors")
                for start in range(0, shape[0], BLOCK):
                    rows = min(BLOCK, shape[0] - start)
                    yield np.frombuffer(fh.read(rows * shape[1] * dtype.itemsize), dtype=dtype).reshape(rows, shape[1])

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The vectors at these sorted positions of the whole corpus, gathered shard by shard (each mapped while
        its rows are read)."""
        return gather_rows(positions, (shard_vectors(file) for file in self.files), self.dim)


def build_from_shards(out: Path, folder: Path, config: IndexConfig, embedder_name: str | None = None, *,
                      progress: Callable[[int], None] | None = None) -> IndexManifest:
    """A new index in ``out`` from every shard in ``folder``, in order (each shard must be complete); ``progress``
    hears the passages of each shard stored."""
    plan = read_plan(folder)
    missing = [number for number in range(len(plan.shards)) if not shard_done(folder, number)]
    if missing:
        raise IndexStoreError(f"{len(missing)} shard(s) of {folder} are not embedded yet (first: {missing[0]}); run "
                              "the command again to embed them")
    if embedder_name is not None and embedder_name != plan.model:
        raise IndexStoreError(f"shards in {folder} were embedded with {plan.model!r}, not {embedder_name!r}")
    vectors = ShardVectors(folder, len(plan.shards))  # refused before anything is written
    embedder = shards_embedder(folder, plan)

    def fill(data: Path) -> IndexManifest:
        with StoreWriter(data / PASSAGES_FILE) as store:
            for number in range(len(plan.shards)):
                before = store.count
                with shard_damage():
                    store.copy_from(shard_file(folder, number, PASSAGES))
                if progress is not None:
                    progress(store.count - before)
            duplicate = store.first_duplicate()
            if duplicate is not None:
                raise IngestError(f"corpus {plan.corpus}: duplicate passage id {duplicate!r}")
            count = store.count
        if vectors.count != count:
            raise IndexStoreError(f"shards in {folder} hold {vectors.count} vectors for {count} passages; remove the "
                                  "folder and embed again")
        if not count:
            raise IndexStoreError("cannot build an index from an empty corpus")
        with faiss_disk_errors():
            _write_dense(data / DENSE, vectors, config, data)
        if config.bm25:
            write_bm25(data)
        return IndexManifest(embedding_model=embedder, dimension=vectors.dim, index_type=config.index_type,
                             count=count, bm25=config.bm25, config=config)

    with index_lock(out):
        write_version(out, fill)
    return IndexManifest.model_validate(json.loads((out / "manifest.json").read_text()))


def _write_dense(path: Path, vectors: ShardVectors, config: IndexConfig, data: Path) -> None:
    if config.index_type in BOUNDED:
        write_bounded(path, vectors, config)
        return
    dense = dense_from((np.asarray(block) for block in vectors.blocks()), config, data)
    if dense is None:
        raise IndexStoreError("cannot build an index from an empty corpus")
    faiss.write_index(dense, str(path))
