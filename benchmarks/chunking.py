"""Issue 63, item 2: chunks a reader would cut. The chunking rule's settings (``index.min_chunk_words``, and
``loaders.chunking.CARRY_WORDS``, the most words a PDF page gives the page before it to end a sentence) chosen on the
tune half of the probe sets of benchmarks/doc_folder.py and reported on the check half, against the rule before
(each page and section chunked alone: ``min_chunk_words=0``).

Per folder and setting: chunks, chunks under 10 words, and for the probes of each half the share whose file holds the
first chunk retrieved, the share whose file holds one of the first five, and (PDF probes) the share with a chunk of
the right file and page among the first five (a chunk that spans two pages counts for both: its citation names
both). Retrieval is what ``index`` builds, done in numpy: each chunk embedded as ``embed_text`` makes it (title, then
text) with tanglerag's default embedder (all-MiniLM-L6-v2; the report names the copy), cosine similarity, 200-word chunks overlapping by 40. And, since
no probe crosses a page (each is a sentence of one page), the share of the PDFs' page breaks that fall inside a
sentence whose two pages some chunk holds together ("cut sentences whole").

The choice, among settings that leave no chunk under 10 words (the issue's goal): the most right files first on the
tune halves of both folders together, then the most right PDF pages in the top five, then the most right files in
the top five, then the most cut sentences whole, then the fewest chunks. Writes section "chunking" of
docs/benchmarks.md.

Usage: .venv/bin/python benchmarks/chunking.py [--embedder default|hash] [--no-write]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from doc_folder import NAMES, folder, probes
from run_io import write_section

from tanglerag.embedding_cache import CachedEmbedder
from tanglerag.embeddings import Embedder, TextEmbedder
from tanglerag.index.passage_index import embed_text
from tanglerag.ingest import SourceDocument, chunk_passages, read_folder
from tanglerag.loaders import chunking
from tanglerag.provenance import page_of, pages_of
from tanglerag.tables import Table
from tanglerag.testing import HashEmbedder
from tanglerag.types import Passage

ROOT = Path(__file__).resolve().parents[1]
MINIMA = (10, 20, 30, 50)
CARRIES = (0, 20, 40, 80)
BEFORE = (0, 0)
TOP = 5
Setting = tuple[int, int]
"""(``min_chunk_words``, ``CARRY_WORDS``)"""


@dataclass(frozen=True)
class Score:
    chunks: int
    short: int
    breaks: int
    """Page breaks inside a sentence (the folder's, not the half's)."""
    whole: int
    """Of those, the ones whose two pages a chunk holds together."""
    file_first: float
    file_top: float
    page_top: float
    probes: int
    pdf_probes: int


@contextmanager
def carry(words: int) -> Iterator[None]:
    """``loaders.chunking.CARRY_WORDS`` set to ``words`` while open."""
    kept = chunking.CARRY_WORDS
    chunking.CARRY_WORDS = words
    try:
        yield
    finally:
        chunking.CARRY_WORDS = kept


def scores(name: str, documents: list[Passage], setting: Setting, embedder: TextEmbedder,
           queries: dict[str, np.ndarray]) -> dict[str, Score]:
    """The folder's documents chunked under ``setting``, scored on each half of its probes."""
    with carry(setting[1]):
        chunks = chunk_passages(documents, name, min_chunk_words=setting[0])
    vectors = embedder.embed([embed_text(c) for c in chunks])
    found: dict[str, list[tuple[dict, list[dict]]]] = {"tune": [], "check": []}
    for probe in probes(name):
        order = np.argsort(-(vectors @ queries[probe["query"]]), kind="stable")[:TOP]
        found[probe["half"]].append((probe, [chunks[i].metadata for i in order]))
    short = sum(len(c.text.split()) < 10 for c in chunks)
    breaks, whole = cut_sentences(documents, chunks)
    return {half: _score(len(chunks), short, breaks, whole, rows) for half, rows in found.items()}


def cut_sentences(documents: list[Passage], chunks: list[Passage]) -> tuple[int, int]:
    """The PDFs' page breaks inside a sentence, and how many of them a chunk spans."""
    spanned = {(c.metadata["path"], p) for c in chunks for p in (pages_of(c.metadata) or []) if
               p + 1 in (pages_of(c.metadata) or [])}
    breaks = [(doc.id, a.page) for doc in documents if isinstance(doc, SourceDocument)
              for a, b in zip(doc.segments, doc.segments[1:], strict=False)
              if a.page is not None and b.page == a.page + 1 and not chunking.ends_sentence(a.text)]
    return len(breaks), sum(b in spanned for b in breaks)


def _score(chunks: int, short: int, breaks: int, whole: int, rows: list[tuple[dict, list[dict]]]) -> Score:
    def pages(meta: dict) -> list[int]:
        return pages_of(meta) or ([page_of(meta)] if page_of(meta) else [])

    first = sum(top[0]["path"] == probe["file"] for probe, top in rows)
    anywhere = sum(any(m["path"] == probe["file"] for m in top) for probe, top in rows)
    paged = [(probe, top) for probe, top in rows if probe["page"] is not None]
    on_page = sum(any(m["path"] == probe["file"] and probe["page"] in pages(m) for m in top) for probe, top in paged)
    return Score(chunks, short, breaks, whole, 100 * first / len(rows), 100 * anywhere / len(rows),
                 100 * on_page / len(paged) if paged else float("nan"), len(rows), len(paged))


def pooled(per_folder: list[Score]) -> tuple[float, float, float, float]:
    """Right file first, right PDF page in the top five, right file in the top five (probes of the folders
    together), and the share of cut sentences kept whole."""
    n, paged = sum(s.probes for s in per_folder), sum(s.pdf_probes for s in per_folder)
    return (sum(s.file_first * s.probes for s in per_folder) / n,
            sum(s.page_top * s.pdf_probes for s in per_folder) / paged,
            sum(s.file_top * s.probes for s in per_folder) / n,
            100 * sum(s.whole for s in per_folder) / max(1, sum(s.breaks for s in per_folder)))


def chosen(results: dict[Setting, dict[str, dict[str, Score]]]) -> Setting:
    """The setting the tune halves choose (the module docstring says how)."""
    def key(setting: Setting) -> tuple[float, ...]:
        tune = [results[setting][name]["tune"] for name in NAMES]
        return (*pooled(tune), -sum(s.chunks for s in tune))

    candidates = [s for s in results if s != BEFORE and all(results[s][n]["tune"].short == 0 for n in NAMES)]
    return max(candidates, key=key)


def report(results: dict[Setting, dict[str, dict[str, Score]]], model: str) -> list[str]:
    best = chosen(results)
    grid = Table(["min words", "carried words", *(f"{n}: chunks" for n in NAMES), "file first", "page top 5",
                  "file top 5", "cut sentences whole"])
    for setting, by_name in results.items():
        first, page, top, whole = pooled([by_name[n]["tune"] for n in NAMES])
        mark = " (chosen)" if setting == best else " (before)" if setting == BEFORE else ""
        grid.add(f"{setting[0]}{mark}", setting[1], *(by_name[n]["tune"].chunks for n in NAMES), f"{first:.1f}%",
                 f"{page:.1f}%", f"{top:.1f}%", f"{whole:.0f}%")
    halves = Table(["folder", "rule", "half", "probes", "chunks", "chunks < 10 words", "file first", "file top 5",
                    "PDF page top 5 (probes)", "cut sentences whole"])
    for name in NAMES:
        for label, setting in (("before", BEFORE), (f"min {best[0]}, carry {best[1]}", best)):
            for half in ("tune", "check"):
                s = results[setting][name][half]
                halves.add(name, label, half, s.probes, s.chunks, s.short, f"{s.file_first:.1f}%",
                           f"{s.file_top:.1f}%", f"{s.page_top:.1f}% ({s.pdf_probes})", f"{s.whole} of {s.breaks}")
    intro = ("The folders and probe sets of `benchmarks/doc_folder.py` (60 queries a folder, each a sentence of one "
             "file; 18 and 20 on their two PDFs). Tune half, both folders' probes together, for every setting tried "
             "(before: each page and section chunked alone); cut sentences whole: of the PDFs' page breaks inside a "
             "sentence, the share a chunk spans:")
    verdict = (f"The rule chosen on the tune half (`index.min_chunk_words` = {best[0]}, `CARRY_WORDS` = {best[1]}) "
               "against the rule before, each half:")
    tune = sum(results[best][n]["tune"].probes for n in NAMES)
    sizes = [results[best][n][h].probes for n in NAMES for h in ("tune", "check")]
    noise = (f"One probe is {100 / tune:.1f} points of the pooled tune half ({tune} probes) and "
             f"{100 / max(sizes):.1f}-{100 / min(sizes):.1f} points of one folder's half; a PDF probe, 5-14 points: "
             "a difference of a probe or two is within noise. Machine: 2 CPU cores shared with other jobs.")
    return [f"## Chunks a reader would cut (`benchmarks/chunking.py`, {model}, one run)", "",
            intro, "", *grid.lines(), "", verdict, "", *halves.lines(), "", noise]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--embedder", choices=("default", "hash"), default="default",
                        help="tanglerag's default embedder, or the hashing one (a quick look at the plumbing)")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/benchmarks.md alone")
    args = parser.parse_args()
    inner: TextEmbedder = Embedder() if args.embedder == "default" else HashEmbedder()
    (ROOT / "runs" / "chunking").mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(inner, ROOT / "runs" / "chunking" / "embeddings.sqlite3")
    texts = sorted({p["query"] for name in NAMES for p in probes(name)})
    queries = dict(zip(texts, embedder.embed(texts), strict=True))
    documents = {name: list(read_folder(folder(name))) for name in NAMES}
    grid = [BEFORE, *((m, c) for m in MINIMA for c in CARRIES)]
    results = {setting: {name: scores(name, documents[name], setting, embedder, queries) for name in NAMES}
               for setting in grid}
    lines = report(results, getattr(inner, "identity", None) or inner.model_name)
    print("\n".join(lines))
    if not args.no_write:
        write_section(ROOT / "docs" / "benchmarks.md", "chunking", "\n".join(lines))


if __name__ == "__main__":
    main()
