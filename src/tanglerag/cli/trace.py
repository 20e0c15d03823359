"""``tanglerag trace show``: a readable summary of the trace of one answer (or of eval predictions).

Reads the output of ``ask --json --trace`` or a ``predictions.jsonl`` from ``eval --out`` (a file or
``-`` for stdin) and prints the LLM calls, the cost per stage and each method step: for COrg the
graph as an edge list and the groups, for post-fusion the vote table, and so on.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape

from tanglerag.cli.common import TerminalConsole, printable
from tanglerag.errors import InputError
from tanglerag.family import families
from tanglerag.jsonio import loads as json_loads
from tanglerag.trace import Trace

trace_app = typer.Typer(no_args_is_help=True, help="Inspect the traces that ask --json --trace and eval write.")


def read_records(source: str) -> list[dict[str, Any]]:
    """One JSON object (ask output) or JSON lines (eval predictions); only records that carry a trace."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{source} is not UTF-8 text") from exc
    try:
        records = [json_loads(text)]
    except json.JSONDecodeError:
        try:
            records = [json_loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise InputError(f"{source} is neither JSON nor JSON lines: {exc.msg} (line {exc.lineno})") from exc
    traced = [r for r in records if isinstance(r, dict) and "trace" in r]
    if not traced:
        raise InputError(f"{source} holds no trace: use `ask --json --trace` or eval predictions")
    return traced


def render(record: dict[str, Any]) -> list[str]:
    """Lines of rich markup describing one traced answer."""
    families()  # loaded, so every family's trace steps are known by kind
    try:
        trace = Trace.model_validate(record["trace"])
    except ValidationError as exc:
        raise InputError(f"malformed trace: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
    answer = str(record.get("answer", "")).splitlines() or [""]  # a line each, not one line with \x0a in it
    lines = [f"[bold]{_field(record.get('method', '?'))}[/]: {_field(record.get('question', ''))}",
             f"answer: {_field(answer[0])}", *(f"        {_field(more)}" for more in answer[1:]), "",
             f"[bold]LLM calls[/] ({len(trace.calls)})"]
    for n, call in enumerate(trace.calls, 1):
        reply = (call.replies[0] if call.replies else "").strip().splitlines()
        first = reply[0][:70] if reply else ""
        lines.append(f"  {n:>2}. {_field(call.stage):<12} {'cached' if call.cached else 'model '} "
                     f"{call.prompt_tokens:>5}+{call.completion_tokens:<4} tok {call.model_seconds:6.2f}s  "
                     f"{_field(first)}")
    by_stage: dict[str, list[int]] = {}
    for call in trace.calls:
        by_stage.setdefault(call.stage, []).append(call.prompt_tokens + call.completion_tokens)
    if by_stage:
        lines.append("  per stage: " + ", ".join(f"{_field(s)} {len(t)} calls / {sum(t)} tok"
                                                 for s, t in by_stage.items()))
    for step in trace.steps:
        title, *details = step.lines()
        lines += ["", f"[bold]{_field(title)}[/]", *(_field(line) for line in details)]
    return lines


def _field(value: object) -> str:
    """A value read from the file, shown within its line: as text, not markup, and with its newlines escaped (a
    question cannot print a line that reads as the answer's or a call's)."""
    return escape(printable(str(value), one_line=True))


@trace_app.command("show")
def show(
    source: Annotated[str, typer.Argument(help="ask --json --trace output or predictions.jsonl; - reads stdin")],
    question_id: Annotated[str | None, typer.Option("--id", help="predictions: only this question id")] = None,
    method: Annotated[str | None, typer.Option("--method", "-m", help="predictions: only this method")] = None,
) -> None:
    """Print the calls, the cost per stage and the method's steps of traced answers."""
    records = [r for r in read_records(source) if (question_id is None or r.get("id") == question_id)
               and (method is None or r.get("method") == method)]
    if not records:
        raise InputError("no traced answer matches --id / --method")
    out = TerminalConsole(highlight=False)
    for i, record in enumerate(records):
        if i:
            out.print("\n" + "-" * 60)
        for line in render(record):
            out.print(line)
