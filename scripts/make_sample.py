"""Rebuild the bundled RAMDocs sample (src/tanglerag/sample_data/) from a RAMDocs file.

The sample must show what the project is for, so it mixes the first ten records of the file (one-answer
questions with misinformation and noise documents) with ten records whose question names two same-name entities,
each with its own gold answer, and whose documents include misinformation and noise. Records are copied
unchanged; the corpus flattens their documents (id ``ramdocs-QQ-J``: sample question QQ, document J).
Usage: python scripts/make_sample.py [../shared/data/ramdocs/dev.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tanglerag.fileio import atomic_write_text

OUT = Path(__file__).resolve().parents[1] / "src/tanglerag/sample_data"
# 0-9: the file's first ten records. The rest: two gold answers for two same-name entities, with at least one
# misinformation and one noise document, at most six documents (a composer, a school, an album, a party, ...).
RECORDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 160, 129, 153, 128, 119, 124, 132, 157, 204, 207]


def main() -> None:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/ramdocs/dev.jsonl")
    lines = source.read_text().splitlines()
    records = [json.loads(lines[i]) for i in RECORDS]
    corpus = [{"id": f"ramdocs-{q:02d}-{j}", "title": "", "text": doc["text"], "doc_type": doc["type"],
               "source_question": q}
              for q, record in enumerate(records) for j, doc in enumerate(record["documents"])]
    atomic_write_text(OUT / "ramdocs_sample.jsonl", "".join(lines[i] + "\n" for i in RECORDS))
    atomic_write_text(OUT / "sample_corpus.jsonl",
                      "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus))


if __name__ == "__main__":
    main()
