"""CDIT's offline curation pass (``cdit trim``): judge each question's retrieval and record witnesses.

One loop that the CLI and ``benchmarks/cdit_trim_recall.py`` both run, so the benchmark measures what
the command does: a plain function for those scripts, each question's judging awaited on the portal loop. The
method records witnesses in the index's trim log (``cdit.record``); the index then separates (and, for HNSW, cuts
links between) passages that enough questions found inconsistent.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from tanglerag.aio import run_sync
from tanglerag.methods.cdit.method import CditMethod
from tanglerag.methods.cdit.steps import CditStep
from tanglerag.stages.retrieve import Retriever
from tanglerag.tracking import track
from tanglerag.types import Question


class CurationTotals(BaseModel):
    """What a curation pass did, summed over its questions."""

    questions: int = 0
    judged: int = 0  # passages judged now (verdicts reused from a close query are not)
    reused: int = 0
    discarded: int = 0
    unreadable: int = 0
    witnesses: int = 0
    separated_now: int = 0
    llm_calls: int = 0


def curate(method: CditMethod, retriever: Retriever, questions: Iterable[str]) -> CurationTotals:
    totals = CurationTotals()
    for text in questions:
        with track() as tracker:
            question = Question(text=text)
            run_sync(method.filter(question, retriever.retrieve(question).passages))
        step = tracker.trace().find(CditStep)
        assert step is not None, "CditMethod.filter records its step on every call"
        totals.questions += 1
        totals.judged += len(step.judgments) - step.reused
        totals.reused += step.reused
        totals.discarded += len(step.discarded)
        totals.unreadable += sum(j.consistent is None for j in step.judgments)
        totals.witnesses += step.witnesses_added
        totals.separated_now += len(step.separated_now)
        totals.llm_calls += tracker.usage.total.llm_calls
    return totals
