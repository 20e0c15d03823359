"""``tanglerag pcas build``: ORCA-ShARC for PCAS (paper 002), built from OR-ShARC with the LLM as judge."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from tanglerag.cli.common import ConfigOpt, SetOpt, VerboseOpt, console, load_settings
from tanglerag.datasets.orca_sharc import OrcaBuilder, write_orca
from tanglerag.runtime import Runtime

pcas_app = typer.Typer(name="pcas", no_args_is_help=True, help="ORCA-ShARC building for PCAS (paper 002).")


@pcas_app.command("build")
def build(
    source: Annotated[Path, typer.Option("--source", help="OR-ShARC split (JSONL), dev or test")],
    out: Annotated[Path, typer.Option("--out", "-o", help="folder for orca_sharc.jsonl + manifest.json")],
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="build a prefix only")] = None,
    n_contexts: Annotated[int, typer.Option("--contexts", min=1, help="scenarios per utterance")] = 10,
    batch: Annotated[int, typer.Option("--batch", min=1, help="candidates judged per LLM call")] = 12,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    judge_above: Annotated[float, typer.Option(
        "--judge-above", min=0.0, max=1.0, help="judge only candidates at least this cosine-similar to the gold scenario "
                              "(MiniLM); 0 judges every candidate")] = 0.3,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Build ORCA-ShARC: each utterance gets its gold scenario plus non-contradicting sampled ones."""

    settings = load_settings(config, set_, verbose)
    runtime = Runtime(settings)
    embedder = runtime.embedder if judge_above > 0 else None
    builder = OrcaBuilder(runtime.llm, n_contexts=n_contexts, batch=batch, seed=seed,
                          embedder=embedder, judge_above=judge_above)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("building ORCA-ShARC", total=limit)
        examples, manifest = builder.build(source, limit, on_step=lambda: progress.advance(task))
    write_orca(out, examples, manifest)
    sys.stdout.write(manifest.model_dump_json(indent=2) + "\n")
