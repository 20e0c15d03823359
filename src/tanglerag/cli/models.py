"""``tanglerag models``: show the configured models; assemble and verify the embedded one."""

from __future__ import annotations

from typing import Annotated

import typer

from tanglerag.cli.common import ConfigOpt, SetOpt, TerminalConsole, VerboseOpt, load_settings
from tanglerag.llm.model_files import BUILTIN_MODELS, assemble_builtin, resolve_gguf
from tanglerag.redaction import without_credentials

app = typer.Typer()


@app.command()
def models(
    prepare: Annotated[bool, typer.Option("--prepare", help="assemble and verify the embedded model")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="re-hash the model file even if it was verified")] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Show the configured models; --prepare / --verify the embedded one."""
    settings = load_settings(config, set_, verbose)
    out = TerminalConsole()
    out.print(f"LLM backend: {settings.llm.backend}, model: {settings.llm.model}")
    if settings.llm.backend == "openai":
        out.print(f"  server: {without_credentials(settings.llm.base_url)} (key from ${settings.llm.api_key_env})")
    out.print(f"embedding model: {settings.embedding.model}")
    out.print(f"cache dir: {settings.cache_dir}")
    if settings.llm.backend == "llamacpp" and (prepare or verify):
        spec = settings.llm.model
        if spec in BUILTIN_MODELS:
            path = assemble_builtin(BUILTIN_MODELS[spec], settings.cache_dir, force_verify=verify)
            out.print(f"embedded model ready and sha256-verified: {path}")
        else:
            out.print(f"embedded model file: {resolve_gguf(spec, settings.cache_dir)}")
