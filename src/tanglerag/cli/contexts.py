"""``tanglerag contexts add|list|remove``: the statements about a user that personal retrieval pairs with passages."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from tanglerag.cli.common import ConfigOpt, SetOpt, console, load_settings
from tanglerag.index.user_contexts import UserContextStore, contexts_as_json
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings

contexts_app = typer.Typer(name="contexts", no_args_is_help=True, help="Manage a user's personal context statements.")

UserOpt = Annotated[str, typer.Option("--user", "-u", help="user id")]


def _store(settings: Settings) -> UserContextStore:
    return Runtime(settings).context_store


@contexts_app.command("add")
def add(user: UserOpt, texts: Annotated[list[str], typer.Argument(help="one or more statements")],
        config: ConfigOpt = None,
        set_: SetOpt = None) -> None:
    """Add statements about a user (profile facts, situation, recent events)."""
    added = _store(load_settings(config, set_)).add(user, texts)
    sys.stdout.write(contexts_as_json(added) + "\n")

@contexts_app.command("list")
def list_(user: UserOpt, config: ConfigOpt = None,
          set_: SetOpt = None) -> None:
    """List a user's statements with their ids."""
    contexts = _store(load_settings(config, set_)).list(user)
    sys.stdout.write(contexts_as_json(contexts) + "\n")

@contexts_app.command("remove")
def remove(user: UserOpt, context_id: Annotated[str, typer.Argument(help="the statement's id, from `contexts list`")],
           config: ConfigOpt = None,
           set_: SetOpt = None) -> None:
    """Remove one statement."""
    _store(load_settings(config, set_)).remove(user, context_id)
    console.print(f"removed {context_id} from {user}")
