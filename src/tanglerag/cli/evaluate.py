"""``tanglerag eval``: benchmark methods on a dataset; the dataset's declared task picks the runner."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tanglerag.cli.ask import WHERE_HELP
from tanglerag.cli.common import ConfigOpt, SetOpt, TerminalConsole, VerboseOpt, comma_list, load_settings
from tanglerag.cli.run_progress import RunProgress, stop_interrupted
from tanglerag.cli.store_options import CollectionOpt, StoreOpt, StorePathOpt, StoreUrlOpt, check_source, store_flags
from tanglerag.datasets.registry import dataset_task, load_dataset
from tanglerag.errors import InputError
from tanglerag.eval.records import EvalReport
from tanglerag.eval.report import (
    failure_lines,
    markdown_table,
    report_caption,
    results_json,
    results_table,
    write_outputs,
)
from tanglerag.eval.runner import EvalRunner
from tanglerag.family import task_runner
from tanglerag.methods.base import method_classes
from tanglerag.metrics.registry import check_names
from tanglerag.runtime import Runtime
from tanglerag.where import parse_where

app = typer.Typer()


@app.command("eval")
def eval_(
    dataset: Annotated[str, typer.Option("--dataset", "-d", help="registered name or file path")],
    methods: Annotated[str, typer.Option("--methods", help="comma-separated method names")] = "concat",
    metrics: Annotated[str | None, typer.Option("--metrics", help="comma-separated metric names "
                                                "(default: each method's own)")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n")] = None,
    random_n: Annotated[int | None, typer.Option("--random", help="a random N of the questions, kept in file order "
                                                 "(seeded by eval.seed)")] = None,
    sample: Annotated[int | None, typer.Option("--sample", hidden=True, help="old name of --random")] = None,
    head: Annotated[int | None, typer.Option("--head", min=1, help="answer only the first N of the loaded questions; "
                                             "the pool keeps all their passages (an interim look at a long run)")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="dataset format (detected if omitted)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="folder for results and predictions; each finished "
                                             "question is checkpointed there and a re-run resumes")] = None,
    index_dir: Annotated[Path | None, typer.Option("--index", "-i", help="index for datasets without passages")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", "-k")] = None,
    scope: Annotated[str | None, typer.Option("--scope", help="own | pooled passages per question")] = None,
    gold: Annotated[str | None, typer.Option("--gold", help="natural | ensure | exclude the gold passage")] = None,
    gold_position: Annotated[str | None, typer.Option("--gold-position", help="retrieval | top | bottom")] = None,
    closed_book_filter: Annotated[bool, typer.Option("--closed-book-filter",
                                                     help="drop questions answered right without passages")] = False,
    samples: Annotated[int | None, typer.Option("--samples", help="self-consistency samples per call")] = None,
    where: Annotated[str | None, typer.Option("--where", "-w", help=WHERE_HELP)] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="ORCA-ShARC: id2snippet.json")] = None,
    retriever: Annotated[str, typer.Option("--retriever", help="ORCA-ShARC: dense, bm25 or both")] = "dense,bm25",
    sweep: Annotated[bool, typer.Option("--sweep", help="ORCA-ShARC: tune lambda and beam on this set")] = False,
    concurrency: Annotated[int | None, typer.Option("--concurrency", min=1, help="questions in flight at once "
                                                    "(default: what the LLM backend serves at once)")] = None,
    fail_fast: Annotated[bool, typer.Option("--fail-fast", help="stop at the first failed question")] = False,
    restart: Annotated[bool, typer.Option("--restart", help="discard the run the --out folder holds (its answers and "
                                          "report) and start over")] = False,
    engine: Annotated[str | None, typer.Option("--engine", help="local (threads) or ray (Ray actors)")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster to join")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress display")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="bypass the LLM cache: every call reaches the model "
                                           "(a resumed run still skips the questions it answered)")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    store: StoreOpt = None, store_url: StoreUrlOpt = None, store_path: StorePathOpt = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Benchmark methods on a dataset; cached LLM calls make re-runs free."""
    if where is not None:
        parse_where(where, tiers=None)  # one line naming what cannot be read
    settings = load_settings(config, set_, verbose, retrieval__top_k=top_k, retrieval__where=where,
                             eval__passage_scope=scope,
                             eval__gold=gold, eval__gold_position=gold_position, methods__samples=samples,
                             eval__closed_book_filter=closed_book_filter or None, eval__concurrency=concurrency,
                             eval__fail_fast=fail_fast or None, eval__engine=engine, eval__ray_address=ray_address,
                             llm__cache=False if no_cache else None,
                             **store_flags(store, store_url, store_path, collection))
    check_source(settings, index_dir, needed=False)
    _check_flags(limit, random_n, sample, restart, out)
    names = comma_list(methods)
    if dataset_task(dataset) == "retrieval":
        task = task_runner("retrieval")
        task(settings, Path(dataset), names, limit=limit, out=out, as_json=as_json,
             options={"corpus": corpus, "retrievers": comma_list(retriever), "sweep": sweep})
        return
    _check_methods(names)
    metric_names = comma_list(metrics or "")
    check_names(metric_names)
    dataset_name, loaded = load_dataset(dataset, fmt, limit, sample if random_n is None else random_n,
                                        settings.eval.seed)
    examples = loaded[:head] if head else loaded
    runner = EvalRunner(Runtime(settings, index_dir=index_dir), metrics=metric_names or None)
    progress = RunProgress(quiet)
    try:
        with progress:
            report, predictions = runner.run(dataset_name, examples, names, pool=loaded, out=out, restart=restart,
                                             listener=progress)
    except KeyboardInterrupt:
        stop_interrupted(progress, out)
    if out:
        write_outputs(out, report, predictions)
    if as_json:
        sys.stdout.write(results_json(report))
    else:
        _print_report(report)


def _check_flags(limit: int | None, random_n: int | None, sample: int | None, restart: bool, out: Path | None) -> None:
    """The flags' own mistakes, refused before anything loads."""
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    if random_n is not None and sample is not None:
        raise InputError("--sample is the old name of --random: give one of them")
    if restart and out is None:
        raise InputError("--restart discards the run an --out folder holds: give the --out to start over")
    if out is not None and out.exists() and not out.is_dir():  # checked now, not after the run
        raise InputError(f"--out {out} is a file; give a folder for the results and predictions")


def _check_methods(names: list[str]) -> None:
    known = method_classes()
    unknown = [m for m in names if m not in known]
    if not names or unknown:
        raise InputError(f"unknown method(s) {unknown or names}; available: {', '.join(sorted(known))}")


def _print_report(report: EvalReport) -> None:
    """A rich table to read on a terminal; piped or redirected, the Markdown that results.md holds."""
    out = TerminalConsole()
    if out.is_terminal:
        out.print(report_caption(report), results_table(report).rich(), *failure_lines(report), sep="\n")
    else:
        out.print(markdown_table(report))

