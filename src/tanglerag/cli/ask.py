"""``tanglerag ask``: retrieve, answer with citations, and show why (or print it all as JSON)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.status import Status

from tanglerag import jsonio
from tanglerag.cli.common import (
    ConfigOpt,
    SetOpt,
    TerminalConsole,
    VerboseOpt,
    console,
    load_settings,
    printable,
    terminal_json,
)
from tanglerag.cli.store_options import CollectionOpt, StoreOpt, StorePathOpt, StoreUrlOpt, check_source, store_flags
from tanglerag.conflicts import ConflictReport, ConflictStep
from tanglerag.corpus import refuse_where_with_user
from tanglerag.errors import InputError
from tanglerag.family import families
from tanglerag.otel import Answered, span_export
from tanglerag.outputs import AnswerOutput, PassageOut, conflicts_of, disagreements
from tanglerag.runtime import DEFAULT_METHOD, AskRequest, Runtime
from tanglerag.stages.followup import Turn, read_turns
from tanglerag.text import after_streamed, first_answer_line, is_unknown
from tanglerag.tracking import ProgressEvent, Tracker
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.where import parse_where

app = typer.Typer()
METHOD_HELP = ("the method: " + ", ".join(name for family in families() for name in family.method_names()) + ". For "
               "your own folder: ledger (dates, revisions and disagreeing sources settled, and said so); concat, the "
               "default, is the fastest; corg for ambiguous questions and same-name entities (docs/methods.md)")
HISTORY_HELP = ("a JSON file of the conversation so far (chat messages [{\"role\": \"user\", \"content\": ...}, "
                "{\"role\": \"assistant\", ...}], or one a line): a question that depends on it (\"and the other "
                "one?\") is first rewritten into a standalone one")
WHERE_HELP = ("retrieve only passages whose document metadata passes this filter, e.g. \"date >= 2024-01-01 and source "
              "in (example.org, 'Le Monde')\" (fields date, source, authority, meta.KEY; = != < <= > >= in; joined by "
              "and)")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    index_dir: Annotated[Path | None, typer.Option("--index", "-i", help="index folder from `tanglerag index`")] = None,
    method: Annotated[str, typer.Option("--method", "-m", help=METHOD_HELP)] = DEFAULT_METHOD,
    top_k: Annotated[int | None, typer.Option("--top-k", "-k")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
    with_trace: Annotated[bool, typer.Option("--trace", help="with --json: add every LLM call and method step")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="bypass the LLM cache")] = False,
    user: Annotated[str | None, typer.Option("--user", "-u", help="use this user's contexts (PCAS)")] = None,
    where: Annotated[str | None, typer.Option("--where", "-w", help=WHERE_HELP)] = None,
    history: Annotated[Path | None, typer.Option("--history", help=HISTORY_HELP)] = None,
    store: StoreOpt = None, store_url: StoreUrlOpt = None, store_path: StorePathOpt = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Retrieve passages and answer with citations; with --user, jointly pick the user's relevant context."""
    if where is not None:
        parse_where(where, tiers=None)  # one line naming what cannot be read, before any setting is loaded
    settings = load_settings(config, set_, verbose, retrieval__top_k=top_k, llm__cache=False if no_cache else None,
                             retrieval__where=where, **store_flags(store, store_url, store_path, collection))
    check_source(settings, index_dir)
    if user is not None:
        refuse_where_with_user(settings)  # before any model loads
    try:
        q = Question(text=question, user_id=user)
    except ValidationError as exc:
        raise InputError(f"invalid question: {exc.errors()[0]['msg']}") from exc
    runtime = Runtime(settings, index_dir=index_dir)
    turns = read_history(history) if history is not None else []  # a follow-up is made standalone first
    request = AskRequest(question=q, method=method, history=turns)
    # --json output is read by programs: no control sequences around it
    streamed = ""
    if console.is_terminal and not as_json:
        answer, streamed = _answered_with_status(runtime, request)
    else:
        answer = runtime.answer(request)
    if settings.otel.enabled:
        _export_spans(runtime, answer)
    if settings.retrieval.where and not answer.passages:  # not to be read as an answer from the documents it kept
        console.print(f"no passage passes the filter {settings.retrieval.where!r}: the answer was made without "
                      "passages", markup=False)
    if as_json:
        output = AnswerOutput.from_answer(answer, user, trace=with_trace)
        sys.stdout.write(terminal_json(json.dumps(output.compact(), ensure_ascii=False, indent=2), sys.stdout) + "\n")
    else:
        print_answer(answer, streamed)


def _answered_with_status(runtime: Runtime, request: AskRequest) -> tuple[Answer, str]:
    """The answer and the text streamed of it, the question watched on the terminal meanwhile (``_Watch``)."""
    with console.status(f"{request.method}: starting ...") as status:
        watch = _Watch(request.method, status)
        ticking = threading.Event()
        ticker = threading.Thread(target=_tick, args=(ticking, watch.refresh), daemon=True)
        ticker.start()
        try:
            answer = runtime.answer(request.model_copy(update={"tracker": Tracker(on_event=watch.heard)}))
        finally:
            ticking.set()
            ticker.join()
    if watch.streamed:
        console.print()
    return answer, "".join(watch.streamed)


class _Watch:
    """A question as ``ask`` shows it on a terminal while it is worked out: a status line (the stage, the model calls
    done, of how many when a step makes several at once, and the seconds since the question was asked, ticking: the
    ledger's claims take minutes on a CPU, and a silent terminal reads as a hang), then the answer's tokens printed
    as the model writes them, in place of the status."""

    def __init__(self, method: str, status: Status) -> None:
        self.method, self.status, self.start = method, status, time.monotonic()
        self.calls, self.stage, self.done = 0, "starting", ""
        self.streamed: list[str] = []

    def heard(self, event: ProgressEvent) -> None:
        self.calls += event.type == "llm_call"
        if event.type == "token":
            if not self.streamed:
                self.status.stop()
            self.streamed.append(event.data["text"])
            console.print(escape(printable(event.data["text"])), end="", style="bold", highlight=False)  # its lines
            return
        if event.type == "batch":  # a batch's calls are charged when its last one ends: counted as they end
            self.done = (f"{event.data['done']} of {event.data['planned']} model calls of this step done, "
                         f"{self.calls} before it, ")
        elif event.type in ("stage_start", "llm_call"):  # no "0 model calls done" while the first one runs
            self.stage = event.stage
            self.done = f"{self.calls} model call{'s' * (self.calls != 1)} done, " if self.calls else ""
        self.refresh()

    def refresh(self) -> None:
        if not self.streamed:
            self.status.update(f"{self.method}: {self.stage} ... ({self.done}{time.monotonic() - self.start:.0f} s)")


def _tick(stop: threading.Event, update: Callable[[], None]) -> None:
    """``update`` once a second until ``stop`` is set: the status line's seconds go on during one long call."""
    while not stop.wait(1.0):
        update()


def _export_spans(runtime: Runtime, answer: Answer) -> None:
    """The answer's trace as OpenTelemetry spans (``otel.enabled``), sent before the command ends."""
    spans = span_export(runtime.settings.otel)
    if spans is not None:
        spans.export(Answered.of(answer), runtime.llm.backend.model_id)
        spans.close()


def read_history(path: Path) -> list[Turn]:
    """A conversation's earlier turns from a JSON file of chat messages (a list, or one message a line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the history {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    stripped = text.strip()
    try:
        messages = jsonio.loads(stripped) if stripped.startswith("[") else [  # over-deep nesting: the file's error
            jsonio.loads(line) for line in stripped.splitlines() if line.strip()]
        return read_turns(_known_roles(messages))
    except ValueError as exc:  # json's errors are ValueErrors too
        raise InputError(f"{path}: not a chat history ({exc}); expected JSON messages [{{\"role\": \"user\", "
                         f"\"content\": \"...\"}}, ...]") from exc


CHAT_ROLES = ("user", "assistant", "system", "developer", "tool", "function")


def _known_roles(messages: object) -> object:
    """``messages`` once every role is one a chat has: turns are read from user and assistant messages and the other
    chat roles are skipped, so a mistyped role ("User", "bot") would drop its turn without a word. ValueError names
    it."""
    for n, message in enumerate(messages if isinstance(messages, list) else [], start=1):
        role = message.get("role") if isinstance(message, dict) else None
        if isinstance(role, str) and role not in CHAT_ROLES:
            raise ValueError(f"message {n}: unknown role {role!r}: user or assistant (system, developer, tool and "
                             "function messages are skipped)")
    return messages


def print_answer(answer: Answer, streamed: str = "") -> None:
    """The answer (unless ``streamed`` already printed it as it is), each step's one-line headline, the passages
    (``*`` = cited) and the cost. What is printed within a line (an id, a title, a source, a verdict) has its
    newlines escaped too: a file named ``a\n*[2] b`` cannot print a passage line of its own."""
    out = TerminalConsole()
    rest = after_streamed(answer.text, streamed)
    if rest is None and streamed.strip():  # the rules changed what streamed: say which one is the answer
        out.print("[dim]the answer, as the method settled it:[/]")
    rest = answer.text if rest is None else rest.strip("\n")
    if rest:  # corpus and model text is printed literally, never as markup
        out.print(f"[bold]{escape(rest)}[/]")
    if is_unknown(first_answer_line(answer.text)):  # a bare "unknown" read as a fault to a newcomer
        out.print("[dim](the documents do not say: no passage below answers the question as the method read them)[/]")
    if answer.cut:
        out.print("[yellow](cut: the answer reached its token budget; raise it with --set methods.answer_tokens=N, "
                  "or the method's own answer_tokens)[/]")
    for step in answer.trace.steps:  # each method family decides which of its decisions `ask` shows in one line
        headline = step.headline()
        if headline and not isinstance(step, ConflictStep):  # its reports get the block below
            out.print(printable(headline, one_line=True), markup=False)
    for line in disagreement_lines(answer):
        out.print(printable(line, one_line=True), markup=False)
    for n, hit in enumerate(answer.passages, 1):
        out.print(passage_line(n, hit, cited=hit.passage.id in answer.citations))
    u = answer.usage.totals()
    out.print(f"[dim]{u['llm_calls']} LLM call{'s' * (u['llm_calls'] != 1)} ({u['cached_calls']} cached), "
              f"{u['prompt_tokens']} prompt + "
              f"{u['completion_tokens']} completion tokens, {u['seconds']:.2f}s[/]")
    spent = [f"{name} {s.total_calls} call{'s' * (s.total_calls != 1)} ({s.prompt_tokens} prompt tokens)"
             for name, s in answer.usage.stages.items() if s.total_calls]
    if spent:
        out.print(f"[dim]calls by stage: {escape(', '.join(spent))}[/]")


def passage_line(n: int, hit: RetrievedPassage, *, cited: bool = False) -> str:
    """The ``n``-th passage on one line, as ``ask`` and ``search`` list it (``*[1] id (0.612) place · date · source
    text...``, ``*`` for a cited one), ready for a ``TerminalConsole``: its markup and control characters escaped."""
    mark = "*" if cited else " "
    line = f"{mark}[{n}] {hit.passage.id} ({hit.score:.3f}) {_provenance(hit)}{_snippet(hit.passage.text)}..."
    return escape(printable(line, one_line=True))


def _snippet(text: str) -> str:
    """A passage's first 100 characters on one line: a Markdown chunk keeps its heading and blank lines, and a
    passage line broken there is no longer one passage a line for a program reading ``ask``'s output."""
    return " ".join(text.split())[:100]


def disagreement_lines(answer: Answer) -> list[str]:
    """A block for each report where sources disagree: its kind, each side's verdict, answer, passages (numbered as
    ``ask`` lists them), independent witnesses and why it was set aside, and the rule that decided."""
    number = {hit.passage.id: n for n, hit in enumerate(answer.passages, 1)}
    lines = []
    for report in disagreements(conflicts_of(answer.trace)):
        about = f" about {report.about}" if report.about else ""
        lines.append(f"Sources disagree ({report.kind.replace('_', ' ')}{about}):")
        for side in report.sides:
            passages = " ".join(f"[{number[p]}]" if p in number else p for p in side.passages)
            witnesses = f"{side.witnesses} witness{'es' * (side.witnesses != 1)}"
            why = f"; {side.note}" if side.note and side.verdict == "rejected" else ""
            lines.append(f"  {side.label:<8} {side.answer} - {passages}, {witnesses}{why}")
        lines.append(f"  rule: {report.rule or _undecided(report)}")
    return lines


def _undecided(report: ConflictReport) -> str:
    last = report.trials[-1] if report.trials else None
    return "no policy decided" + (f" ({last.policy}: {last.outcome})" if last else "")


def _provenance(hit: RetrievedPassage) -> str:
    """Where a passage stands in its file, and its document's date and source, as its line shows them
    (``guide.pdf p. 3, §Scope · 2024-03-01 · example.org  ``), or nothing."""
    shown = PassageOut.from_hit(hit)
    source = shown.source if shown.source is None or len(shown.source) <= 60 else shown.source[:59] + "…"
    about = " · ".join(part for part in (shown.location, shown.date, source) if part)
    return f"{about}  " if about else ""
