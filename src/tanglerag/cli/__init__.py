"""The ``tanglerag`` command line, one module per command (or group of commands).

Every module defines its own Typer app; this package merges them under one root group whose
``UserErrorGroup`` turns a ``TangleragError`` into one line and exit code 2 (``common.py``).
"""

from __future__ import annotations

import typer

from tanglerag.cli import ask, cdit, diagnose, evaluate, index, models, personal, serve, trace
from tanglerag.cli.common import UserErrorGroup

app = typer.Typer(cls=UserErrorGroup, add_completion=False, no_args_is_help=True,
                  help="Answer questions from tangled retrieved contexts.")
for module in (index, ask, evaluate, diagnose, models, serve):
    app.add_typer(module.app)
app.add_typer(personal.contexts_app, name="contexts")
app.add_typer(personal.pcas_app, name="pcas")
app.add_typer(trace.trace_app, name="trace")
app.add_typer(cdit.cdit_app, name="cdit")
