"""The retrieval evaluation: PCAS and its baselines on ORCA-ShARC, scored with trec_eval, as a typed report.

``tanglerag eval`` runs this for datasets whose declared task is ``retrieval``; the answer evaluation
(``eval/runner.py``) serves the ``qa`` task. Written as ``results.json`` in the shape the PCAS report reads.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.datasets.orca_sharc import load_orca, load_snippets
from tanglerag.datasets.registry import shared_data
from tanglerag.errors import InputError
from tanglerag.eval.report import results_json
from tanglerag.fileio import atomic_write_text
from tanglerag.methods.pcas.joint import RETRIEVAL_METHODS
from tanglerag.methods.pcas.scorers import BM25Scorer, DenseScorer, PairScorer
from tanglerag.methods.pcas.scoring import PcasResult, run_method, sweep
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings

RETRIEVERS = ("dense", "bm25")
LAMBDA_GRID = [round(0.1 * i, 1) for i in range(1, 10)]
BEAM_GRID = [5, 10, 20]


class RetrievalScores(BaseModel):
    method: str = Field(description="retrieval method and scorer, e.g. pcas-dense")
    metrics: dict[str, float | None]
    usage: dict[str, float]


class RetrievalReport(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    dataset: str
    n: int
    results: list[RetrievalScores]
    # written as "setting" (the stored runs' key): lambda and beam used, and the sweep per scorer if one ran
    protocol: dict[str, Any] = Field(default_factory=dict, validation_alias="setting", serialization_alias="setting")
    settings: dict[str, Any] = Field(default_factory=dict)

    def to_output(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class RetrievalRunner:
    """>>> RetrievalRunner(Runtime(settings)).run(Path("orca"), ["pcas"], ["dense"])  # doctest: +SKIP"""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.settings

    def run(self, dataset: Path, methods: list[str], retrievers: list[str], *, corpus: Path | None = None,
            sweep_grid: bool = False, limit: int | None = None) -> RetrievalReport:
        bad = [m for m in methods if m not in RETRIEVAL_METHODS] + [r for r in retrievers if r not in RETRIEVERS]
        if not methods or not retrievers or bad:
            raise InputError(f"for ORCA-ShARC choose methods from {', '.join(RETRIEVAL_METHODS)} and retrievers from "
                             f"{', '.join(RETRIEVERS)} (got {', '.join(bad) or 'none'})")
        examples = load_orca(dataset)[:limit]
        doc_ids, documents = load_snippets(corpus or shared_data("or-sharc/id2snippet.json"))
        results: list[RetrievalScores] = []
        tuned: dict[str, Any] = {}
        lam, beam = self.settings.personal.lam, self.settings.personal.beam
        for retriever in retrievers:
            scorer = self._scorer(retriever, documents)
            if sweep_grid:
                grid = sweep(scorer, examples, doc_ids, documents, lams=LAMBDA_GRID, beams=BEAM_GRID)
                lam, beam = grid[0][0], grid[0][1]
                tuned[retriever] = {"lambda": lam, "beam": beam, "grid": [
                    {"lambda": g[0], "beam": g[1], **g[2].doc, "context_r1": g[2].context_r1} for g in grid]}
            for method in methods:
                scored = run_method(method, scorer, examples, doc_ids, documents, lam=lam, beam=beam)
                results.append(_scores(f"{method}-{retriever}", scored))
        name = dataset.stem if dataset.is_file() else dataset.name
        return RetrievalReport(dataset=name, n=len(examples), results=results,
                               protocol={"lambda": lam, "beam": beam, "tuned": tuned},
                               settings=self.settings.model_dump(mode="json"))

    def _scorer(self, retriever: str, documents: list[str]) -> PairScorer:
        return DenseScorer(self.runtime.embedder, documents) if retriever == "dense" else BM25Scorer(documents)


def _scores(name: str, result: PcasResult) -> RetrievalScores:
    metrics: dict[str, float | None] = {f"doc_{k}": v for k, v in result.doc.items()}
    metrics["context_recall@1"] = result.context_r1
    return RetrievalScores(method=name, metrics=metrics, usage=result.usage)


def retrieval_lines(report: RetrievalReport) -> list[str]:
    """One line per method and scorer, for the terminal."""
    lines = []
    for row in report.results:
        m = row.metrics
        ctx = "-" if m["context_recall@1"] is None else f"{100 * m['context_recall@1']:.2f}"
        lines.append(f"{row.method:<12} R@1 {100 * (m['doc_recall@1'] or 0):.2f}  R@5 {100 * (m['doc_recall@5'] or 0):.2f}  "
                     f"MAP@5 {100 * (m['doc_map@5'] or 0):.2f}  context R@1 {ctx}  "
                     f"{1000 * row.usage['seconds']:.2f} ms/query")
    return lines


def evaluate_retrieval(settings: Settings, dataset: Path, names: list[str], *, limit: int | None, out: Path | None,
                       as_json: bool, options: dict[str, Any]) -> None:
    """``tanglerag eval`` on an ORCA-ShARC dataset: the family's ``retrieval`` task (``--corpus``, ``--retriever``
    and ``--sweep`` arrive in ``options``)."""
    report = RetrievalRunner(Runtime(settings)).run(dataset, names, options["retrievers"], corpus=options["corpus"],
                                                    sweep_grid=options["sweep"], limit=limit)
    if out:
        atomic_write_text(out / "results.json", results_json(report))
    if as_json:
        sys.stdout.write(results_json(report))
        return
    sys.stdout.write("".join(f"{line}\n" for line in retrieval_lines(report)))  # method names and numbers only
