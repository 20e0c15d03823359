"""The ``tanglerag`` command line, one module per command (or group of commands).

Every module defines its own Typer app; this package merges them, and every registered family's commands
(``Family.commands``: ``cdit``, ``pcas``, ``diagnose``), under one root group whose ``UserErrorGroup`` turns a
``TangleragError`` into one line and exit code 2 (``common.py``).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated

import typer

from tanglerag.cli import ask, contexts, convert, evaluate, index, models, search, serve, trace
from tanglerag.cli.common import UserErrorGroup
from tanglerag.family import families, resolve

app = typer.Typer(cls=UserErrorGroup, add_completion=True, no_args_is_help=True,
                  help="Answer questions from tangled retrieved contexts.")


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"tanglerag {version('tanglerag')}")
        raise typer.Exit()


@app.callback()
def _root(_: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print the version and exit")] = False) -> None:
    """Answer questions from tangled retrieved contexts."""


for module in (index, search, ask, evaluate, models, serve):
    app.add_typer(module.app)
app.add_typer(contexts.contexts_app)
app.add_typer(trace.trace_app, name="trace")
app.add_typer(convert.convert_app, name="convert")
for reference in (command for family in families() for command in family.commands):
    app.add_typer(resolve(reference))
