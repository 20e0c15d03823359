"""Quickstart for the Python API: index the bundled sample corpus, ask, take a document out, ask again.

    .venv/bin/python examples/quickstart.py   # the embedded model, offline: 4 LLM calls, 20-90 s each on 2 cores

The sample holds two works called "String Quintet No. 2" (Brahms's and Mozart's) and a document that credits
one to Beethoven; the walk-through asks who composed it, once and awaited, asks a batch of questions, then
removes the misleading document and asks again about Beethoven (with the embedded model: "Yes", citing that
document, before; "unknown" after). ``tests/test_examples.py`` runs it with a canned LLM and a hashing embedder
in place of the models.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import NamedTuple

import tanglerag
from tanglerag.embeddings import TextEmbedder
from tanglerag.llm.client import LLM

SAMPLE = Path(tanglerag.__file__).parent / "sample_data" / "sample_corpus.jsonl"
QUESTION = "Who is the composer of String Quintet No. 2?"
DOUBT = "Did Beethoven write String Quintet No. 2?"
BATCH = [QUESTION, DOUBT, "What is the population of Broken Bow?"]
MISLEADING = "ramdocs-10-2"
"""The sample's document that credits the quintet to Beethoven."""


class Tour(NamedTuple):
    """What the walk-through got, for a reader to look at (and the example's test to check)."""

    indexed: tanglerag.IndexManifest
    asked: tanglerag.Answer
    awaited: tanglerag.Answer
    batch: list[tanglerag.Answer]
    removed: tanglerag.DocumentChanges
    after_removal: tanglerag.Answer


def main(index_dir: Path, *, llm: LLM | None = None, embedder: TextEmbedder | None = None) -> Tour:
    """Build an index of the sample in ``index_dir`` and walk through the API; ``llm`` / ``embedder`` replace the
    configured models (the settings are the defaults: ``tanglerag.Settings.load(overrides=[...])`` changes them)."""
    rag = tanglerag.Tanglerag(index_dir, tanglerag.Settings.load(overrides=["retrieval.top_k=5"]),
                              llm=llm, embedder=embedder)
    indexed = rag.build(SAMPLE)
    print(f"indexed {indexed.count} passages ({indexed.index_type}, {indexed.embedding_model})")
    asked = show("ask", rag.ask(QUESTION))
    awaited = show("aask", asyncio.run(rag.aask(QUESTION)))  # in an application: `await rag.aask(...)`
    batch = rag.ask_many(BATCH, concurrency=2,
                         progress=lambda done, total: print(f"  ask_many: {done}/{total} answered"))
    for answer in batch:
        show("ask_many", answer)
    removed = rag.remove(MISLEADING)
    print(f"removed {MISLEADING}: {removed.removed} passage(s)")
    after_removal = show("after removal", rag.ask(DOUBT))
    return Tour(indexed, asked, awaited, batch, removed, after_removal)


def show(label: str, answer: tanglerag.Answer) -> tanglerag.Answer:
    """Print an answer with the passages it was shown (``*`` marks the ones it cites) and what it cost."""
    print(f"{label}: {answer.question}\n  -> {answer.text}")
    for hit in answer.passages:
        mark = "*" if hit.passage.id in answer.citations else " "
        print(f"  {mark}[{hit.rank}] {hit.passage.id} ({hit.score:.3f}) {hit.passage.text[:70]}...")
    cost = answer.usage.total
    print(f"  {cost.llm_calls} LLM call(s), {cost.cached_calls} cached, {cost.seconds:.1f} s")
    return answer


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(Path(folder) / "index")
