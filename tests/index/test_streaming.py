"""Streaming ingest: a corpus bigger than the batch gives the index the in-memory path gives; a kill half-way
leaves the old index in use."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tanglerag.config import IndexConfig
from tanglerag.errors import IndexStoreError
from tanglerag.index.passage_index import PassageIndex, read_manifest
from tanglerag.index.streaming import build_streaming
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

EMBEDDER = HashEmbedder()
QUERIES = ["river 4 and the mill", "bridge 9", "a passage about river 1"]


def _corpus(n: int) -> list[Passage]:
    return [Passage(id=f"p{i}", title=f"T{i % 4}", text=f"passage {i} about river {i % 13} and bridge {i % 9}")
            for i in range(n)]


@pytest.mark.parametrize("settings", [{"index_type": "flat"}, {"index_type": "ivf"},
                                      {"index_type": "ivf", "ivf_nlist": 2}])  # trained on 128 of the 500
def test_a_streamed_index_equals_the_one_built_in_memory(tmp_path, settings):
    config, corpus, seen = IndexConfig(**settings, bm25=True), _corpus(500), []
    streamed = build_streaming(tmp_path / "s", iter(corpus), EMBEDDER, config, batch_size=64, progress=seen.append)
    built = PassageIndex.build(corpus, EMBEDDER, config)
    assert seen == [64] * 7 + [52] and read_manifest(tmp_path / "s").count == 500
    assert list(streamed.passages) == corpus and not list(tmp_path.rglob("*.spool"))
    assert streamed.vectors(["p0", "p499"]).tolist() == built.vectors(["p0", "p499"]).tolist()
    for query in QUERIES:
        for mode in ("dense", "bm25"):
            assert [h.passage.id for h in streamed.search(query, 5, mode)] == \
                [h.passage.id for h in built.search(query, 5, mode)]


def test_an_empty_stream_is_refused_and_the_old_index_kept(tmp_path):
    build_streaming(tmp_path / "idx", iter(_corpus(3)), EMBEDDER, IndexConfig())
    with pytest.raises(IndexStoreError, match="empty corpus"):
        build_streaming(tmp_path / "idx", iter([]), EMBEDDER, IndexConfig())
    assert len(PassageIndex.load(tmp_path / "idx", EMBEDDER).passages) == 3


KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tanglerag.config import IndexConfig
    from tanglerag.index.streaming import build_streaming
    from tanglerag.testing import HashEmbedder
    from tanglerag.types import Passage

    def slow():
        for i in range(10_000):
            if i % 100 == 0:
                print(i, flush=True)
                time.sleep(0.05)
            yield Passage(id=f"n{i}", text=f"new passage {i}")

    build_streaming(Path(sys.argv[1]), slow(), HashEmbedder(), IndexConfig(), batch_size=100)
""")


def test_a_kill_during_a_streamed_rebuild_leaves_the_old_index(tmp_path):
    folder = tmp_path / "idx"
    build_streaming(folder, iter(_corpus(20)), EMBEDDER, IndexConfig())
    process = subprocess.Popen([sys.executable, "-c", KILLED, str(folder)], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and int(process.stdout.readline() or 0) < 1000:  # ten batches written
        pass
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert [p.id for p in PassageIndex.load(folder, EMBEDDER).passages] == [f"p{i}" for i in range(20)]
    build_streaming(folder, iter(_corpus(5)), EMBEDDER, IndexConfig())  # the next build sweeps the leftover
    assert [p.name.startswith("data-") for p in folder.iterdir()].count(True) == 1
