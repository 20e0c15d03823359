"""Issue 30: sentence-transformers' plain `encode` against `encode_overlapped` (the next batch tokenized in a thread
while the model embeds this one), same passages, same model, on whatever device torch has here.

On a GPU the tokenizer is the limit and the overlap is what the sentence-transformers embedder uses; on a CPU the
model is the slow part and `embed` keeps the plain `encode`. This prints both rates (and the tokenizer's alone) so
either machine can show which holds. Passages as corpus_scale.py makes them (60 English words of MiniLM's vocabulary).
Usage: .venv/bin/python benchmarks/embed_overlap.py [--passages 2000] [--batch 32] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from corpus_scale import _vocabulary, passages
from run_io import write_section

from tanglerag.config import EmbeddingConfig
from tanglerag.st_embedder import SentenceTransformerEmbedder, encode_overlapped, tokenizer_of
from tanglerag.tables import Table


def rates(n: int, batch: int) -> tuple[str, dict[str, float]]:
    embedder = SentenceTransformerEmbedder(EmbeddingConfig(backend="sentence-transformers"))
    model = embedder._load()
    texts = [row["text"] for row in passages(n, vocabulary=_vocabulary(embedder))]
    model.encode(texts[:batch], batch_size=batch)  # first-call set-up is not the rate
    timed = {}
    start = time.perf_counter()
    tokenize = tokenizer_of(model)
    for s in range(0, n, batch):
        tokenize(texts[s:s + batch])
    timed["tokenizer alone"] = n / (time.perf_counter() - start)
    start = time.perf_counter()
    model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)
    timed["plain encode"] = n / (time.perf_counter() - start)
    start = time.perf_counter()
    encode_overlapped(model, texts, batch, normalize=True)
    timed["tokenizer beside the model"] = n / (time.perf_counter() - start)
    return str(model.device), timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    device, timed = rates(args.passages, args.batch)
    lines = [f"## Tokenizing beside the model (`benchmarks/embed_overlap.py --passages {args.passages}`, one run)",
             f"all-MiniLM-L6-v2 on `{device}`, batch {args.batch}, {args.passages:,} passages of 60 words.", "",
             *Table(["path", "passages/s", "vs plain encode"],
                    [[name, f"{rate:,.0f}", f"{rate / timed['plain encode']:.2f}x"] for name, rate in timed.items()]).lines()]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(args.write, f"embed_overlap_{device.split(':')[0]}", text)


if __name__ == "__main__":
    main()
