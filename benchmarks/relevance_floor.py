"""Issue 69: a relevance floor, so a passage clearly unrelated to the question (a licence page at cosine 0.11) does not
reach the model only because the top-k is always filled. The rule, ``retrieval.min_score`` (a dense search's cosine
under which a passage is left out), is chosen on the tune half of the probe sets of benchmarks/doc_folder.py and
reported on the check half.

Each folder is indexed as ``tanglerag index`` indexes it (the default embedder, chunking and dense search) and
searched for the top 5 of each probe:
- related: a probe asked of its own folder, the score of the best passage of the file the probe's sentence is from
  (when that file is in the top 5): what a floor must keep;
- unrelated: a probe asked of the other folder, every score of its top 5, for probes on works the two folders do not
  share (the New Maintainers' Guide, the Developer's Reference and Node.js's API pages are in both, so those are
  left out): what a floor should drop.
A probe is a sentence of its file cut lightly, so its related scores run higher than a person's question's would,
and the two folders are both software documentation, so their "unrelated" passages are often on a nearby topic. So
the asks of benchmarks/people_docs.py (questions as people ask them, over small folders on everyday topics, halves by
folder) are scored too: related, the best score of the ask's own folder; unrelated, the top 5 of the ask put to
another folder (the next one in name order: a library's loan rules asked of a marathon's results). The floor chosen
is the highest that keeps at least 99% of the tune half's related passages of both sets. Writes section
"relevance-floor" of docs/benchmarks.md.

Usage: .venv/bin/python benchmarks/relevance_floor.py [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from doc_folder import NAMES, folder, probes
from run_io import write_section

from tanglerag.api import Tanglerag
from tanglerag.provenance import PATH
from tanglerag.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
TOP = 5
SHARED = ("maint-guide", "developers-reference", "nodejs")
KEEP = 0.99
FLOORS = [round(x, 2) for x in np.arange(0.0, 0.61, 0.05)]


UNFLOORED = ["retrieval.min_score=null"]
"""Every passage of the top 5, whatever its score: the scores measured are the ones a floor would be chosen from."""


def searched(name: str) -> Tanglerag:
    index = ROOT / "runs" / "relevance_floor" / name
    rag = Tanglerag(index, Settings.load(overrides=UNFLOORED))
    if not (index / "manifest.json").exists():
        rag.build(str(folder(name)))
    return rag


def scores(rags: dict[str, Tanglerag]) -> dict[str, dict[str, list[float]]]:
    """Related and unrelated scores per half, as the module's docstring says."""
    out = {half: {"related": [], "unrelated": []} for half in ("tune", "check")}
    for name in NAMES:
        other = next(n for n in NAMES if n != name)
        for probe in probes(name):
            hits = rags[name].search(probe["query"], top_k=TOP)
            own = [h.score for h in hits if h.passage.metadata.get(PATH) == probe["file"]]
            if own:
                out[probe["half"]]["related"].append(max(own))
            if not any(work in probe["file"] for work in SHARED):
                out[probe["half"]]["unrelated"] += [h.score for h in rags[other].search(probe["query"], top_k=TOP)]
    return out


def people_scores() -> dict[str, dict[str, list[float]]]:
    """Related and unrelated scores per half for the asks of people_docs.py, each folder indexed as it indexes it."""
    from people_docs import DATA, index_of, load_asks

    settings, cache = Settings.load(overrides=UNFLOORED), Path(tempfile.gettempdir()) / "tanglerag-people-docs"
    asks = load_asks()
    folders = sorted({a.folder for a in asks})
    rags = {f: Tanglerag(index_of(DATA / f, settings, cache), settings) for f in folders}
    out = {half: {"related": [], "unrelated": []} for half in ("tune", "check")}
    for ask in asks:
        other = folders[(folders.index(ask.folder) + 1) % len(folders)]
        out[ask.half]["related"].append(max(h.score for h in rags[ask.folder].search(ask.question, top_k=TOP)))
        out[ask.half]["unrelated"] += [h.score for h in rags[other].search(ask.question, top_k=TOP)]
    return out


def share(values: list[float], floor: float, above: bool) -> float:
    kept = sum(v >= floor for v in values)
    return (kept if above else len(values) - kept) / max(1, len(values))


def table(label: str, found: dict[str, dict[str, list[float]]], chosen: float) -> list[str]:
    """One set's sizes, score quantiles and shares kept and dropped at each floor, per half."""
    tune, check = found["tune"], found["check"]
    quantiles = {half: {kind: np.quantile(v, [0.05, 0.5, 0.95]).round(2).tolist() for kind, v in found[half].items()}
                 for half in found}
    lines = [(f"### {label}: related {len(tune['related'])} tune / {len(check['related'])} check, unrelated "
              f"{len(tune['unrelated'])} / {len(check['unrelated'])} scores; quantiles (5%, 50%, 95%) {quantiles}"),
             "", "| floor | related kept, tune | unrelated dropped, tune | related kept, check | unrelated dropped, check |",
             "|---|---|---|---|---|"]
    for floor in FLOORS:
        mark = " (chosen)" if floor == chosen else ""
        lines.append(f"| {floor:.2f}{mark} | {share(tune['related'], floor, True):.1%} | "
                     f"{share(tune['unrelated'], floor, False):.1%} | {share(check['related'], floor, True):.1%} | "
                     f"{share(check['unrelated'], floor, False):.1%} |")
    return [*lines, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    sets = {"doc probes": scores({name: searched(name) for name in NAMES}), "people's asks": people_scores()}
    related_tune = [v for found in sets.values() for v in found["tune"]["related"]]
    chosen = max(f for f in FLOORS if share(related_tune, f, True) >= KEEP)
    lines = ["## Relevance floor (`benchmarks/relevance_floor.py`, default embedder, dense, top 5, one run)", "",
             (f"Chosen on the tune halves (the highest floor keeping {KEEP:.0%} of the related passages of both "
              f"sets): **{chosen:.2f}**; the check halves below it."), ""]
    for label, found in sets.items():
        lines += table(label, found, chosen)
    print("\n".join(lines))
    if not args.no_write:
        write_section(ROOT / "docs" / "benchmarks.md", "relevance-floor", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
