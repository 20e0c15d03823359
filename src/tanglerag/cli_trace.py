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
from rich.console import Console
from rich.markup import escape

from tanglerag.errors import InputError
from tanglerag.trace import (
    AnswerPoolStep,
    CditStep,
    ClarificationTreeStep,
    ContextGraphStep,
    ContextRankingStep,
    DistillStep,
    DivaStep,
    FallbackStep,
    GroupsStep,
    PersonalContextStep,
    RationaleStep,
    SeparationStep,
    SummaryStep,
    Trace,
)

trace_app = typer.Typer(no_args_is_help=True, help="Inspect the traces that ask --json --trace and eval write.")


def read_records(source: str) -> list[dict[str, Any]]:
    """One JSON object (ask output) or JSON lines (eval predictions); only records that carry a trace."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror}") from exc
    try:
        records = [json.loads(text)]
    except json.JSONDecodeError:
        try:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise InputError(f"{source} is neither JSON nor JSON lines: {exc.msg} (line {exc.lineno})") from exc
    traced = [r for r in records if isinstance(r, dict) and "trace" in r]
    if not traced:
        raise InputError(f"{source} holds no trace: use `ask --json --trace` or eval predictions")
    return traced


def render(record: dict[str, Any]) -> list[str]:
    """Lines of rich markup describing one traced answer."""
    try:
        trace = Trace.model_validate(record["trace"])
    except ValidationError as exc:
        raise InputError(f"malformed trace: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
    lines = [f"[bold]{escape(record.get('method', '?'))}[/]: {escape(record.get('question', ''))}",
             f"answer: {escape(str(record.get('answer', '')))}", "", f"[bold]LLM calls[/] ({len(trace.calls)})"]
    for n, call in enumerate(trace.calls, 1):
        reply = (call.replies[0] if call.replies else "").strip().splitlines()
        first = reply[0][:70] if reply else ""
        lines.append(f"  {n:>2}. {call.stage:<12} {'cached' if call.cached else 'model '} "
                     f"{call.prompt_tokens:>5}+{call.completion_tokens:<4} tok {call.model_seconds:6.2f}s  "
                     f"{escape(first)}")
    by_stage: dict[str, list[int]] = {}
    for call in trace.calls:
        by_stage.setdefault(call.stage, []).append(call.prompt_tokens + call.completion_tokens)
    if by_stage:
        lines.append("  per stage: " + ", ".join(f"{s} {len(t)} calls / {sum(t)} tok" for s, t in by_stage.items()))
    for step in trace.steps:
        lines += ["", *_step_lines(step)]
    return lines


def _step_lines(step: Any) -> list[str]:
    if isinstance(step, ContextGraphStep):
        number = {n.passage_id: n.number for n in step.nodes}
        out = [(f"[bold]context graph[/] ({step.mode}; {step.pairs_judged}/{step.pairs_total} pairs judged, "
               f"{step.unparsed} unparsed)")]
        out += [f"  [{number[e.source]}] {escape(e.source)} -- {e.relation} -- [{number[e.target]}] "
                f"{escape(e.target)} ({e.origin})" for e in step.edges]
        return out
    if isinstance(step, GroupsStep):
        out = [f"[bold]groups[/] ({step.strategy}{', each context answered alone' if step.answer_each else ''})"]
        out += [f"  {g}. {', '.join(group.passage_ids)}" + (f"  asked: {escape(group.question)}" if group.question
                                                              else "") for g, group in enumerate(step.groups, 1)]
        out += [f"  dropped {d.passage_id}: {d.reason}" + (f" (kept {d.kept_instead})" if d.kept_instead else "")
                for d in step.dropped]
        return out
    if isinstance(step, AnswerPoolStep):
        decided = f"winner: {escape(str(step.winner))}" if step.voted else "no vote: the answer is distilled"
        out = [f"[bold]answer pool[/] ({len(step.pool)} answers; {decided})"]
        out += [f"  {row.votes} vote(s)  {escape(row.answer)}  <- {', '.join(row.passage_ids)}" for row in step.tally]
        unknown = [a.passage_id or "?" for a in step.pool if a.unknown]
        if unknown:
            out.append(f"  unknown from: {', '.join(unknown)}")
        return out
    if isinstance(step, FallbackStep):
        return [f"[bold]fallback[/]: {'post-fusion took over' if step.fired else 'not needed'}"]
    if isinstance(step, DistillStep):
        return [(f"[bold]distill[/]: kept {', '.join(step.kept) or 'none'}; candidates "
                f"{escape('; '.join(step.candidates)) or 'none'}; chosen {escape(str(step.chosen))}")]
    if isinstance(step, RationaleStep):
        return [(f"[bold]rationale[/]: final answer line {'found' if step.format_ok else 'missing'}; sources named "
                f"{step.cited_numbers or 'none'}")]
    if isinstance(step, ContextRankingStep):
        return [f"[bold]context ranking[/]: {', '.join(step.ranking)}; kept {', '.join(step.chosen)}"]
    if isinstance(step, SummaryStep):
        return ["[bold]summary[/]:", f"  {escape(step.summary)}"]
    if isinstance(step, DivaStep):
        out = [f"[bold]diva[/] (mode {step.mode}" + (f", grade {step.grade}" if step.grade else "") + ")"]
        if step.ambiguity_types or step.reason:
            out.append(f"  ambiguity: {', '.join(step.ambiguity_types) or 'none'}; {escape(step.reason)}")
        if step.interpretations:
            out.append("  interpretations" + (" (none usable: the question itself)" if step.interpretation_fallback
                                              else "") + ":")
            out += [f"    {n}. {escape(q)}" for n, q in enumerate(step.interpretations, 1)]
        out += [f"  retrieved for {escape(r.query)}: {', '.join(r.passage_ids)}" for r in step.retrievals]
        if step.kept:
            out.append("  kept: " + ", ".join(f"{k.passage_id} ({k.relevance:.2f})" for k in step.kept))
        out += [f"  covers {escape(v.interpretation)}: {'?' if v.covered is None else 'yes' if v.covered else 'no'}"
                for v in step.verification]
        return out
    if isinstance(step, ClarificationTreeStep):
        out = [f"[bold]tree of clarifications[/] ({step.expansions} expansions, {len(step.nodes)} readings)"]
        out += [f"  {'  ' * (n.depth - 1)}- {escape(n.question)} -> {escape(n.answer)}" for n in step.nodes]
        return out
    if isinstance(step, PersonalContextStep):
        chosen = f"{escape(step.text)} ({step.context_id}, score {step.score:.3f})" if step.text else "none"
        return [f"[bold]personal context[/] of {step.user} (lambda {step.lam}, beam {step.beam}): {chosen}"]
    if isinstance(step, CditStep):
        dropped = ", ".join(escape(d) for d in step.discarded) or "nothing"
        out = [f"[bold]CDIT[/] ({step.judge}; answered by {step.answer_method}): discarded {dropped}"]
        out += [f"  {escape(j.passage_id)}: {'unreadable, kept' if j.consistent is None else 'matches' if j.consistent else 'does not match'}"
                for j in step.judgments]
        if step.recorded:
            out.append(f"  {step.witnesses_added} witnesses recorded; separated now: {len(step.separated_now)}")
        return out
    if isinstance(step, SeparationStep):
        return ["[bold]CDIT separation[/]: " + ", ".join(f"{escape(d.passage_id)} (separated from "
                                                          f"{escape(d.separated_from)})" for d in step.dropped)]
    return [f"[bold]{step.kind}[/]"]


@trace_app.command("show")
def show(
    source: Annotated[str, typer.Argument(help="ask --json --trace output or predictions.jsonl; - reads stdin")],
    question_id: Annotated[str | None, typer.Option("--id", help="predictions: only this question id")] = None,
    method: Annotated[str | None, typer.Option("--method", "-m", help="predictions: only this method")] = None,
) -> None:
    """Print the calls, the cost per stage and the method's steps of traced answers."""
    from tanglerag.cli import _fail

    try:
        records = [r for r in read_records(source) if (question_id is None or r.get("id") == question_id)
                   and (method is None or r.get("method") == method)]
        if not records:
            raise InputError("no traced answer matches --id / --method")
        out = Console(highlight=False)
        for i, record in enumerate(records):
            if i:
                out.print("\n" + "-" * 60)
            for line in render(record):
                out.print(line)
    except InputError as exc:
        _fail(exc)
