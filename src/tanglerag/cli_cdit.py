"""CLI for CDIT's index trimming (paper 003): ``cdit status`` and ``cdit undo``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from tanglerag.index.passage_index import PassageIndex, read_manifest
from tanglerag.index.trim import TrimLog
from tanglerag.runtime import Runtime

cdit_app = typer.Typer(no_args_is_help=True, help="CDIT index trimming: witnesses, separated passages, undo.")
IndexOpt = Annotated[Path, typer.Option("--index", "-i", help="index folder")]


def _print(numbers: dict, as_json: bool, separator: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(numbers) + "\n")
    else:
        Console().print(separator.join(f"{key.replace('_', ' ')}: {value}" for key, value in numbers.items()))


def register(setup, fail, user_errors) -> None:
    """Attach the sub-commands; ``setup``/``fail`` come from the main CLI so options behave the same."""

    @cdit_app.command("status")
    def status(index_dir: IndexOpt, as_json: Annotated[bool, typer.Option("--json")] = False,
               config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
               set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None) -> None:
        """Witnesses, separated pairs and cut HNSW links of an index."""
        try:
            settings = setup(config, set_, False)
            index = PassageIndex.load(index_dir, Runtime(settings).embedder)  # reads the trim log too
            state = index.trim
            report = {"separated_pairs": len(state.separated), "cut_links": index.cut_link_count,
                      "pending_witnesses": state.pending, "witnesses": sum(state.witnesses.values()),
                      "judged_queries": state.judged_queries, "last_seq": state.last_seq,
                      "index_type": index.config.index_type}
        except user_errors as exc:
            fail(exc)
            return
        _print(report, as_json, "\n")

    @cdit_app.command("trim")
    def trim(index_dir: IndexOpt,
             dataset: Annotated[str, typer.Option("--dataset", "-d", help="questions: registered name or file")],
             witnesses: Annotated[int | None, typer.Option("--witnesses", min=1, help="cdit.witnesses")] = None,
             limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
             top_k: Annotated[int | None, typer.Option("--top-k", "-k", min=1)] = None,
             as_json: Annotated[bool, typer.Option("--json")] = False,
             config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
             set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None) -> None:
        """Offline curation: judge each question's retrieval, record witnesses, separate (and cut) links."""
        from tanglerag.datasets.registry import load_dataset
        from tanglerag.methods.cdit import CditMethod
        from tanglerag.trace import CditStep
        from tanglerag.tracking import track
        from tanglerag.types import Question

        try:
            overrides = [*(set_ or []), *([f"cdit.witnesses={witnesses}"] if witnesses else []),
                         *([f"retrieval.top_k={top_k}"] if top_k else []), "cdit.record=true"]
            settings = setup(config, overrides, False)
            read_manifest(index_dir)
            _, examples = load_dataset(dataset, None, limit, None, settings.eval.seed)
            runtime = Runtime(settings, index_dir=index_dir)
            resources = runtime.resources()
            method, retriever = CditMethod(resources), resources.retriever
            totals = {"questions": 0, "judged": 0, "reused": 0, "discarded": 0, "unreadable": 0, "witnesses": 0,
                      "separated_now": 0, "llm_calls": 0}
            for example in examples:
                with track() as tracker:
                    question = Question(text=example.question)
                    method.filter(question, retriever.retrieve(question).passages)
                step = tracker.trace().find(CditStep)
                totals["questions"] += 1
                totals["judged"] += len(step.judgments) - step.reused
                totals["reused"] += step.reused
                totals["discarded"] += len(step.discarded)
                totals["unreadable"] += sum(j.consistent is None for j in step.judgments)
                totals["witnesses"] += step.witnesses_added
                totals["separated_now"] += len(step.separated_now)
                totals["llm_calls"] += tracker.usage.total.llm_calls
        except user_errors as exc:
            fail(exc)
            return
        _print(totals, as_json, ", ")

    @cdit_app.command("undo")
    def undo(index_dir: IndexOpt,
             to: Annotated[int, typer.Option("--to", min=0, help="keep log entries up to this sequence number")] = 0
             ) -> None:
        """Forget witnesses and separations after ``--to`` (default: all); the index is untouched on disk."""
        try:
            read_manifest(index_dir)
            dropped = TrimLog(index_dir).undo(to)
        except user_errors as exc:
            fail(exc)
            return
        Console(stderr=True).print(f"dropped {dropped} trim log entries after #{to}")
