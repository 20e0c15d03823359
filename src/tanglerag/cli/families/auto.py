"""``tanglerag diagnose RUN``: how often each tangle occurred in an eval run, where ``auto`` sent it, and how every
method in the run scored on it; ``--write`` saves the routes that scored best as a settings file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import yaml

from tanglerag.cli.common import ConfigOpt, SetOpt, TerminalConsole, VerboseOpt, load_settings
from tanglerag.eval.families.auto import diagnose as diagnose_run
from tanglerag.eval.runs import read_run
from tanglerag.fileio import atomic_write_text
from tanglerag.methods.auto.config import AutoConfig

app = typer.Typer()


@app.command()
def diagnose(
    run: Annotated[Path, typer.Argument(help="an eval --out folder whose methods include auto")],
    metric: Annotated[str, typer.Option(help="the score compared per tangle")] = "answer_recall",
    write: Annotated[Path | None, typer.Option("--write", help="save the suggested auto.routes as a settings file")] = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Tangles auto found in a run, the routes it took, and each method's score per tangle."""
    settings = load_settings(config, set_, verbose)
    found = diagnose_run(read_run(run.name, run), metric)
    out = TerminalConsole()
    for row in found.rows:
        routes = ", ".join(f"{method} x{count}" for method, count in row.routes.items())
        scores = "  ".join(f"{method} {score:.2f}" for method, score in sorted(row.scores.items(), key=lambda s: -s[1]))
        out.print(f"{row.tangle}: {row.questions} question(s), routed to {routes}; {metric}: {scores}", markup=False)
    current = {str(tangle): method for tangle, method in settings.section(AutoConfig).routes.items()}
    suggested = found.suggested_routes(current)
    changed = {t: m for t, m in suggested.items() if current.get(t) != m}
    out.print(f"suggested changes: {changed or 'none'}", markup=False)
    if write is not None:
        atomic_write_text(write, yaml.safe_dump({"auto": {"routes": suggested}}, sort_keys=False))
        out.print(f"wrote {write} (use it with --config)", markup=False)
