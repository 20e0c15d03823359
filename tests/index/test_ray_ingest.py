"""Ingest on Ray: shards embedded by Ray Data actors on a local Ray give the local build's passages and vectors
(JSONL, Parquet, the DPR TSV), and a job that died part-way embeds only the missing shards when run again."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import ray
import ray.cloudpickle
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.config import IndexConfig
from tanglerag.errors import IngestError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.ray_ingest import embed_shards
from tanglerag.index.shard_build import build_from_shards
from tanglerag.index.shards import open_shards, plan_shards, shard_done
from tanglerag.index.streaming import build_streaming
from tanglerag.ingest import stream_corpus
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # actors get this module's helpers by value
pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.usefixtures("local_ray")]  # one Ray instance (conftest)
CONFIG = IndexConfig(index_type="flat", chunk_words=12, chunk_overlap=2)


def _records(n: int = 40) -> list[dict]:
    """Documents of 5-30 words (long ones are chunked), some with a date."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho"]
    return [{"id": f"d{i}", "title": f"Doc {i % 7}", "text": " ".join(words[(i + j) % len(words)]
                                                                      for j in range(5 + i % 26)),
             **({"date": f"2024-01-{1 + i % 28:02d}"} if i % 3 == 0 else {})} for i in range(n)]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _contents(index: PassageIndex) -> tuple[list[tuple], np.ndarray]:
    passages = [(p.id, p.title, p.text, p.metadata) for p in index.passages]
    return passages, index.vectors_at(list(range(len(passages))))


def _on_ray(corpus: Path, tmp_path: Path, name: str, per_shard: int = 8, make=HashEmbedder) -> PassageIndex:
    plan = plan_shards(corpus, CONFIG, "hash-64", documents_per_shard=per_shard)
    embed_shards(plan, tmp_path / f"{name}.shards", make, actors=2)
    build_from_shards(tmp_path / name, tmp_path / f"{name}.shards", CONFIG)
    return PassageIndex.load(tmp_path / name, HashEmbedder())


def test_ray_shards_give_the_local_builds_passages_and_vectors(tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", _records())
    local = build_streaming(tmp_path / "local", stream_corpus(corpus, chunk_size=12, chunk_overlap=2),
                            HashEmbedder(), CONFIG)
    expected, vectors = _contents(local)
    assert len(expected) > 40  # long documents were chunked

    on_ray, ray_vectors = _contents(_on_ray(corpus, tmp_path, "ray"))
    assert on_ray == expected and np.array_equal(ray_vectors, vectors)

    # the same records as Parquet (row groups of 16: three shards), and as the DPR TSV
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(_records()), tmp_path / "corpus.parquet", row_group_size=16)
    parquet, parquet_vectors = _contents(_on_ray(tmp_path / "corpus.parquet", tmp_path, "parquet"))
    assert parquet == expected and np.array_equal(parquet_vectors, vectors)

    tsv = tmp_path / "psgs.tsv"
    tsv.write_text("id\ttext\ttitle\n" + "".join(f'{r["id"]}\t"{r["text"]}"\t{r["title"]}\n' for r in _records()))
    without_dates = [(pid, title, text, {k: v for k, v in meta.items() if k != "date"})
                     for pid, title, text, meta in expected]
    dpr, dpr_vectors = _contents(_on_ray(tsv, tmp_path, "dpr"))
    assert dpr == without_dates and np.array_equal(dpr_vectors, vectors)


class FailsOn:
    """Builds a hashing embedder that fails on a shard holding ``trigger`` (as a job killed part-way would stop)."""

    def __init__(self, trigger: str) -> None:
        self.trigger = trigger

    def __call__(self):
        trigger, inner = self.trigger, HashEmbedder()

        class Failing:
            model_name, dimension = inner.model_name, inner.dimension

            def embed(self, texts, *, show_progress=False):
                if any(text.startswith(trigger) for text in texts):
                    raise RuntimeError("killed")
                return inner.embed(texts)

        return Failing()


class Counting:
    """Builds a hashing embedder that records how many texts it embedded (in a file: actors are processes)."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def __call__(self):
        log, inner = self.log, HashEmbedder()

        class Logged:
            model_name, dimension = inner.model_name, inner.dimension

            def embed(self, texts, *, show_progress=False):
                with log.open("a") as fh:
                    fh.write(f"{len(texts)}\n")
                return inner.embed(texts)

        return Logged()


def test_a_job_that_died_embeds_only_the_missing_shards_when_run_again(tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", _records())
    plan = plan_shards(corpus, CONFIG, "hash-64", documents_per_shard=8)
    assert len(plan.shards) == 5 and plan.documents == 40
    folder = tmp_path / "shards"
    with pytest.raises(Exception, match="killed"):
        embed_shards(plan, folder, FailsOn("Doc 3: "), actors=1)  # d3 is in shard 0: it fails first
    missing = [n for n in range(5) if not shard_done(folder, n)]
    assert 0 in missing
    log = tmp_path / "embedded.log"
    heard = []
    assert embed_shards(plan, folder, Counting(log), actors=2,
                        progress=lambda documents, passages: heard.append((documents, passages))) == len(missing)
    from tanglerag.index.shards import read_shard

    redone = sum(len(read_shard(folder, n)[0]) for n in missing)
    assert sum(int(line) for line in log.read_text().split()) == redone
    assert sum(documents for documents, _ in heard) == 40  # the shards already there, then each redone one
    assert embed_shards(plan, folder, Counting(log), actors=2) == 0  # all there: nothing to do, Ray not needed

    build_from_shards(tmp_path / "idx", folder, CONFIG)
    local = build_streaming(tmp_path / "local", stream_corpus(corpus, chunk_size=12, chunk_overlap=2),
                            HashEmbedder(), CONFIG)
    assert _contents(PassageIndex.load(tmp_path / "idx", HashEmbedder()))[0] == _contents(local)[0]


def test_shards_of_another_plan_or_a_duplicate_id_are_refused(tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", _records(10))
    folder = tmp_path / "shards"
    open_shards(folder, plan_shards(corpus, CONFIG, "hash-64", documents_per_shard=4))
    with pytest.raises(IngestError, match="made for another chunk_words"):
        open_shards(folder, plan_shards(corpus, CONFIG.model_copy(update={"chunk_words": 50}), "hash-64",
                                        documents_per_shard=4))
    # the same id in two shards: each shard alone is fine, the build refuses it
    duplicated = _jsonl(tmp_path / "dup.jsonl", [*_records(5), {"id": "d1", "text": "again"}])
    plan = plan_shards(duplicated, CONFIG, "hash-64", documents_per_shard=3)
    embed_shards(plan, tmp_path / "dup.shards", HashEmbedder, actors=1)
    with pytest.raises(IngestError, match="duplicate passage id 'd1'"):
        build_from_shards(tmp_path / "dup", tmp_path / "dup.shards", CONFIG)
    assert not (tmp_path / "dup" / "manifest.json").exists()


def test_cli_engine_ray_builds_the_index_and_reports_a_bad_line(tmp_path, monkeypatch):
    name = Settings().embedding.model
    monkeypatch.setattr("tanglerag.cli.index.embedder_factory", lambda settings: _NamedHash(settings.embedding.model))
    corpus = _jsonl(tmp_path / "corpus.jsonl", _records(12))
    runner = CliRunner()
    args = ["index", str(corpus), "--out", str(tmp_path / "idx"), "--engine", "ray", "--ray-actors", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "12 documents in 1 shard(s), 1 to embed" in result.output and "embedding shards kept in" in result.output
    assert len(PassageIndex.load(tmp_path / "idx", HashEmbedder(name)).passages) == 12
    assert (tmp_path / "idx.shards" / "shard-000000.npy").exists()

    bad = tmp_path / "bad.jsonl"
    bad.write_text(corpus.read_text() + "{not json\n")
    result = runner.invoke(app, ["index", str(bad), "--out", str(tmp_path / "bad")] + args[4:])
    assert result.exit_code == 2 and "bad.jsonl:13" in result.output
    result = runner.invoke(app, [*args, "--add"])
    assert result.exit_code == 2 and "--engine ray builds a new index" in result.output


class _NamedHash:
    """The hashing embedder under the configured model's name (what the CLI's actors would build)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self):
        return HashEmbedder(self.name)
