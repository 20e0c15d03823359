"""CLI for personal context: ``contexts add|list|remove`` and ``pcas build`` / the PCAS evaluation."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from tanglerag.config import Settings
from tanglerag.fileio import atomic_write_text
from tanglerag.personal.store import UserContextStore, contexts_as_json
from tanglerag.runtime import Runtime

log = logging.getLogger(__name__)
console = Console(stderr=True)

contexts_app = typer.Typer(no_args_is_help=True, help="Manage a user's personal context statements.")
pcas_app = typer.Typer(no_args_is_help=True, help="ORCA-ShARC building for PCAS (paper 002).")

UserOpt = Annotated[str, typer.Option("--user", "-u", help="user id")]


def _store(settings: Settings) -> UserContextStore:
    return Runtime(settings).context_store


def register(app: typer.Typer, setup, fail, user_errors) -> None:
    """Attach the sub-commands; ``setup``/``fail`` come from the main CLI so options behave the same."""

    @contexts_app.command("add")
    def add(user: UserOpt, texts: Annotated[list[str], typer.Argument(help="one or more statements")],
            config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
            set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None) -> None:
        """Add statements about a user (profile facts, situation, recent events)."""
        try:
            added = _store(setup(config, set_, False)).add(user, texts)
        except user_errors as exc:
            fail(exc)
            return
        sys.stdout.write(contexts_as_json(added) + "\n")

    @contexts_app.command("list")
    def list_(user: UserOpt, config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
              set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None) -> None:
        """List a user's statements with their ids."""
        try:
            contexts = _store(setup(config, set_, False)).list(user)
        except user_errors as exc:
            fail(exc)
            return
        sys.stdout.write(contexts_as_json(contexts) + "\n")

    @contexts_app.command("remove")
    def remove(user: UserOpt, context_id: Annotated[str, typer.Argument(help="id from `contexts list`")],
               config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
               set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None) -> None:
        """Remove one statement."""
        try:
            _store(setup(config, set_, False)).remove(user, context_id)
        except user_errors as exc:
            fail(exc)
            return
        console.print(f"removed {context_id} from {user}")

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
        config: Annotated[Path | None, typer.Option("--config", "-c")] = None,
        set_: Annotated[list[str] | None, typer.Option("--set", "-s")] = None,
        verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
    ) -> None:
        """Build ORCA-ShARC: each utterance gets its gold scenario plus non-contradicting sampled ones."""
        from tanglerag.personal.orca_sharc import OrcaBuilder, write_orca

        try:
            settings = setup(config, set_, verbose)
            runtime = Runtime(settings)
            embedder = runtime.embedder if judge_above > 0 else None
            builder = OrcaBuilder(runtime.llm, n_contexts=n_contexts, batch=batch, seed=seed,
                                  embedder=embedder, judge_above=judge_above)
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("building ORCA-ShARC", total=limit)
                examples, manifest = builder.build(source, limit, on_step=lambda: progress.advance(task))
            write_orca(out, examples, manifest)
        except user_errors as exc:
            fail(exc)
            return
        sys.stdout.write(manifest.model_dump_json(indent=2) + "\n")

    app.add_typer(contexts_app, name="contexts")
    app.add_typer(pcas_app, name="pcas")


def run_pcas_eval(settings: Settings, dataset: Path, methods: list[str], corpus: Path | None, retrievers: list[str],
                  sweep_grid: bool, limit: int | None, out: Path | None) -> dict:
    """The retrieval-level evaluation behind ``eval`` for ORCA-format datasets."""
    from tanglerag.datasets.registry import shared_data
    from tanglerag.personal.evaluate import run_method, sweep
    from tanglerag.personal.orca_sharc import load_orca, load_snippets
    from tanglerag.personal.scorers import BM25Scorer, DenseScorer

    examples = load_orca(dataset)[:limit]
    doc_ids, documents = load_snippets(corpus or shared_data("or-sharc/id2snippet.json"))
    results, tuned = [], {}
    lam, beam = settings.personal.lam, settings.personal.beam
    for retriever in retrievers:
        scorer = DenseScorer(Runtime(settings).embedder, documents) if retriever == "dense" else BM25Scorer(documents)
        if sweep_grid:
            grid = sweep(scorer, examples, doc_ids, documents, lams=[round(0.1 * i, 1) for i in range(1, 10)],
                         beams=[5, 10, 20])
            lam, beam = grid[0][0], grid[0][1]
            tuned[retriever] = {"lambda": lam, "beam": beam,
                                "grid": [{"lambda": g[0], "beam": g[1], **g[2].doc, "context_r1": g[2].context_r1}
                                         for g in grid]}
        for method in methods:
            r = run_method(method, scorer, examples, doc_ids, documents, lam=lam, beam=beam)
            metrics = {f"doc_{k}": v for k, v in r.doc.items()} | {"context_recall@1": r.context_r1}
            results.append({"method": f"{method}-{retriever}", "metrics": metrics, "usage": r.usage})
    report = {"dataset": dataset.stem if dataset.is_file() else dataset.name, "n": len(examples), "results": results,
              "setting": {"lambda": lam, "beam": beam, "tuned": tuned}, "settings": settings.model_dump(mode="json")}
    if out:
        atomic_write_text(out / "results.json", json.dumps(report, indent=2) + "\n")
    return report
