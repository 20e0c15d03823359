"""Write a dataset's pooled passages as a JSONL corpus (labels kept in metadata) for `tanglerag index`.

CDIT trims a persistent index, so its evaluation retrieves from an index folder rather than from the
in-memory pool `eval --scope pooled` builds. RAMDocs' document types (correct / misinformation / noise)
stay in each record's metadata, where the CDIT report reads them to score the judge.
Run: .venv/bin/python benchmarks/cdit_corpus.py --dataset ramdocs --out runs/cdit/ramdocs_pool.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tanglerag.datasets.registry import load_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ramdocs")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    _, examples = load_dataset(args.dataset)
    pooled = {p.id: p for ex in examples for p in ex.passages}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for p in pooled.values():
            fh.write(json.dumps({"id": p.id, "title": p.title, "text": p.text, "metadata": p.metadata}) + "\n")
    print(f"{len(pooled)} passages from {len(examples)} questions -> {args.out}")


if __name__ == "__main__":
    main()
