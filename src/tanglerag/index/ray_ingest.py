"""Embed a corpus's shards on a Ray cluster (``tanglerag index --engine ray``): Ray Data hands the shards still
missing to a pool of actors, each of which loads the embedding model once (on a GPU of its own where the cluster
has GPUs: then at most one actor a GPU), reads its shard of the corpus file itself, embeds it and writes the shard's
files (``index.shards``).

Ray Data rather than the eval engine's plain actors: a shard's result is files on disk and a count, so there is
nothing to carry back but the count, and Ray Data gives what this needs as it is: an actor pool sized to the
cluster, GPUs per actor, streaming dispatch of the next shard to the first free actor, and retries of a task whose
worker died. Every node must see the corpus and the shards folder at the same path (a shared file system), as
every eval actor must see the index.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tanglerag.conflicts import DEFAULT_AUTHORITY_TIERS
from tanglerag.embeddings import TextEmbedder, embedder_identity
from tanglerag.errors import ConfigError, IndexStoreError, IngestError, TangleragError
from tanglerag.index.passage_index import embed_text
from tanglerag.index.reaper import dies_with_this_process
from tanglerag.index.shards import ShardPlan, open_shards, record_embedder, shard_passages, write_shard

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[], TextEmbedder]
"""Builds the embedder inside each actor (``functools.partial(Embedder, settings.embedding)``; tests: the hashing
embedder). It must pickle: Ray sends it to the actors."""


class ShardEmbedder:
    """One actor of the pool: its embedder is built once, then each shard it is handed is read, embedded and
    written."""

    def __init__(self, plan_json: str, folder: str, make_embedder: EmbedderFactory,
                 tiers: Mapping[str, float]) -> None:
        self.plan = ShardPlan.model_validate_json(plan_json)
        self.folder = Path(folder)
        self.embedder = make_embedder()
        self.tiers = dict(tiers)
        if self.embedder.model_name != self.plan.model:
            raise IndexStoreError(f"the actors' embedder is {self.embedder.model_name!r}, the plan's "
                                  f"{self.plan.model!r}")
        record_embedder(self.folder, self.plan, embedder_identity(self.embedder))  # every actor writes the same

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each shard's row: its number, passages written, seconds, and the one-line error of a shard the user must
        mend (a malformed line, a repeated id, a full disk): returned, not raised, because Ray's wrapping of a raised exception
        does not keep its type (a bug or a dead worker still raises)."""
        done, passages_out, seconds, errors = [], [], [], []
        for number in (int(n) for n in batch["shard"]):
            start = time.perf_counter()
            try:
                passages = shard_passages(self.plan, number, self.tiers)
                vectors = (self.embedder.embed([embed_text(p) for p in passages]) if passages
                           else np.zeros((0, self.embedder.dimension), dtype="float32"))
                write_shard(self.folder, number, passages, vectors)
                error = ""
            except TangleragError as exc:  # a malformed line, a full disk, a model that cannot load
                passages, error = [], str(exc)
            done.append(number)
            passages_out.append(len(passages))
            seconds.append(time.perf_counter() - start)
            errors.append(error)
        return {"shard": np.array(done), "passages": np.array(passages_out), "seconds": np.array(seconds),
                "error": np.array(errors, dtype=object)}


def embed_shards(plan: ShardPlan, folder: Path, make_embedder: EmbedderFactory, *, actors: int = 2,
                 address: str | None = None, gpus_per_actor: float | None = None, cpus_per_actor: float = 1.0,
                 tiers: Mapping[str, float] = DEFAULT_AUTHORITY_TIERS,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Embed every shard of ``plan`` not yet in ``folder`` on ``actors`` Ray actors and return how many were embedded
    now; ``progress(documents, passages)`` hears each finished shard (the shards already there first, as one call
    with passages 0). ``address``: a cluster to join (default: the Ray this process runs in, else a local one);
    ``gpus_per_actor``: default 1 when the cluster has GPUs (and no more actors than GPUs), else 0; ``cpus_per_actor``: the cores each
    actor holds (Ray gives its torch as many threads)."""
    todo = open_shards(folder, plan)
    if progress is not None and len(todo) < len(plan.shards):
        progress(plan.documents - sum(plan.shards[n].documents for n in todo), 0)
    if not todo:
        return 0
    with _ray_session(address) as ray:
        if gpus_per_actor is None:
            gpus = int(ray.cluster_resources().get("GPU", 0))
            gpus_per_actor = 1.0 if gpus else 0.0
            if 0 < gpus < actors:
                log.warning("the cluster has %d GPU(s): %d actors embed, one GPU each, instead of %d", gpus, gpus,
                            actors)
                actors = gpus
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.execution_options.preserve_order = False  # the first free actor takes the next shard
        # one block per shard, so each is dispatched alone to the first free actor
        items = ray.data.from_items([{"shard": n} for n in todo], override_num_blocks=len(todo))
        results = items.map_batches(
            ShardEmbedder, batch_size=1, batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(actors, len(todo))),
            num_gpus=gpus_per_actor, num_cpus=cpus_per_actor, fn_constructor_kwargs={
                "plan_json": plan.model_dump_json(), "folder": str(folder.resolve()), "make_embedder": make_embedder,
                "tiers": dict(tiers)})
        for row in results.iter_rows():
            if row["error"]:
                raise IngestError(str(row["error"]))
            if progress is not None:
                progress(plan.shards[int(row["shard"])].documents, int(row["passages"]))
    return len(todo)


@contextmanager
def _ray_session(address: str | None) -> Iterator[Any]:
    """Ray, as this process runs in it or joined now (``address``: a cluster; None: a local one, started here and
    ended with the block, its processes killed with this process however it ends)."""
    ray = _ray()
    if ray.is_initialized():
        yield ray
        return
    with dies_with_this_process():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise ConfigError("--engine ray needs Ray Data: pip install 'tanglerag[ray]'") from None
    return ray
