"""What every command shares: the options, settings loading, and the one place user errors are reported.

A ``TangleragError`` (something the user can fix) raised anywhere below a command becomes one line on
stderr and exit code 2 (``UserErrorGroup``); any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import datetime
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, Progress, TaskID, TextColumn
from rich.text import Text
from typer._click.exceptions import NoArgsIsHelpError, UsageError  # typer vendors click, not re-exporting these
from typer.core import TyperGroup

from tanglerag.errors import InputError, TangleragError
from tanglerag.redaction import without_credentials
from tanglerag.settings import Settings

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_IN_A_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters other than newline and tab shown escaped (``\\x1b``): corpus, model and
    server text must not reset, retitle or reprogram the terminal it is printed on (``--json`` is not printed
    through here: it stays byte-exact). ``one_line`` escapes newlines and tabs too, for what is printed within a
    line (an id, a title, a source, a file name): such a field cannot end its line and forge the next one."""
    return (_IN_A_LINE if one_line else _CONTROL).sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    """``\\x1b`` for a character up to 0xff, ``\\u2028`` above (``\\x2028`` would read as ``\\x20`` and "28")."""
    code = ord(found.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_JSON_C1 = re.compile(r"[\x7f-\x9f]")


def terminal_json(text: str, stream: TextIO) -> str:
    """JSON text as it is written to ``stream``: on a terminal, DEL and the C1 controls (U+009B is CSI, which a
    terminal may obey as ``ESC [``) are written as their ``\\u`` escapes, which every JSON reader turns back into the
    same characters (``json.dumps`` already escapes C0). Piped or redirected, the text is left byte-exact."""
    if not stream.isatty():
        return text
    return _JSON_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TerminalConsole(Console):
    """A rich Console that passes every string it prints through ``printable``; rich adds its own styling after.

    Piped or redirected, text is not wrapped: a line is one line whatever its length (rich would cut it at 80
    columns, splitting a passage line or a Markdown table row that a program reads back)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if not self.is_terminal:
            kwargs.setdefault("soft_wrap", True)
        super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)


class _PrintableLogHandler(RichHandler):
    """Log lines on a terminal: control characters escaped, no credentials in a URL (any library's line)."""

    def render_message(self, record: logging.LogRecord, message: str) -> Any:
        return super().render_message(record, printable(without_credentials(message)))


class _PlainLogFormatter(logging.Formatter):
    """Log lines for a pipe or a file: ``LEVEL message`` on one line each, control characters escaped, and no
    credentials in a URL (httpx logs each request's whole URL)."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(without_credentials(f"{record.levelname} {super().format(record)}"))


def _log_handler() -> logging.Handler:
    """Rich's columns on a terminal; plain unwrapped lines when stderr is piped or redirected (a log file, journald)."""
    if console.is_terminal:
        return _PrintableLogHandler(console=console, show_path=False)
    plain = logging.StreamHandler()
    plain.setFormatter(_PlainLogFormatter("%(message)s"))
    return plain


console = TerminalConsole(stderr=True)

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML config file")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", "-s", help="override, e.g. llm.temperature=0.2")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="log progress details")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


def load_settings(config: Path | None, overrides: list[str] | None, verbose: bool = False,
                  **flags: Any) -> Settings:
    """Settings from the config file, ``--set`` overrides, then the command's flags (``section__key=value``;
    flags left at None are not set), and logging at the asked verbosity."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s",
                        handlers=[_log_handler()], force=True)
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on its own logger
    values = {key.replace("__", "."): value for key, value in flags.items() if value is not None}
    return Settings.load(config, overrides, values)


def comma_list(text: str) -> list[str]:
    """The non-empty names of a comma-separated option."""
    return [part.strip() for part in text.split(",") if part.strip()]


def report_user_error(exc: TangleragError) -> None:
    told = without_credentials(" ".join(str(exc).split()))
    console.print(Text.assemble(("error: ", "bold red"), printable(told)), soft_wrap=True)


class UserErrorGroup(TyperGroup):
    """The root command group: every sub-command runs inside it, so this is the one error boundary."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]  # typer.Context is what typer passes
        try:
            return super().invoke(ctx)
        except TangleragError as exc:
            report_user_error(exc)
            raise typer.Exit(code=2) from None
        except UsageError as exc:  # a sub-command's mistyped option or missing argument: one line, not a box
            if isinstance(exc, NoArgsIsHelpError):
                raise  # "tanglerag trace" alone: its help
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            report_user_error(InputError(f"{where}{exc.format_message()}"))
            raise typer.Exit(code=2) from None


class RateProgress:
    """What a long command calls with each batch's count: it shows the count, the rate and, once the total is known,
    the time left. On a terminal that is a transient bar redrawn in place; piped or redirected (a log, CI, ``tee``) it
    is a plain line every ``every`` seconds and a last one at the end, since a redrawn bar there is either nothing or
    a screenful of control sequences.

    The rate is the count over the seconds since the work began, so it shows from the first batch (rich's own
    speed needs two batches, and a sync of twenty changed files may be one batch)."""

    def __init__(self, label: str, unit: str, total: float | None, every: float) -> None:
        self.label, self.unit, self.total, self.every = label, unit, total, every
        self.done = 0.0
        self.began = time.monotonic()
        self._printed: float | None = None  # when the last plain line was printed
        self._printed_done = -1.0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, n: float) -> None:
        """One batch of ``n`` items is done."""
        self.done += n
        self._show()

    def expect(self, total: float) -> None:
        """The total is known now (a counting pass ran after the progress began): the rate and the time left are
        measured from here, so the counting is not taken for the work."""
        self.total, self.began = total, time.monotonic()
        self._show()

    def line(self) -> str:
        """The count, the rate and the time left (or spent): the plain line's text and the bar's."""
        seconds = time.monotonic() - self.began
        rate = self.done / seconds if self.done and seconds > 0 else None
        count = f"{self.done:,.0f}/{self.total:,.0f}" if self.total is not None else f"{self.done:,.0f}"
        speed = f"{rate:,.1f}" if rate is not None and rate < 10 else f"{rate:,.0f}" if rate is not None else "-"
        if self.total is not None and rate:
            left = f"ETA {_clock(max(0.0, self.total - self.done) / rate)}"
        else:
            left = f"{_clock(seconds)} elapsed"
        return f"{count} {self.unit} · {speed} {self.unit}/s · {left}"

    def _show(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done, total=self.total, line=self.line())
        elif self._due():
            self._print()

    def _due(self) -> bool:
        return self.done > 0 and (self._printed is None or time.monotonic() - self._printed >= self.every)

    def _print(self) -> None:
        console.print(f"{self.label}: {self.line()}")
        self._printed, self._printed_done = time.monotonic(), self.done

    def finish(self) -> None:
        """Piped: the last count gets its line unless the last line printed already said it."""
        if self._bar is None and self.done > 0 and self.done != self._printed_done:
            self._print()

    @contextmanager
    def drawn(self) -> Iterator[None]:
        """The transient bar on a terminal while the work runs; nothing to draw when piped."""
        if not console.is_terminal:
            yield
            return
        with Progress(TextColumn(self.label), BarColumn(), TextColumn("{task.fields[line]}"), console=console,
                      transient=True) as bar:
            self._bar, self._task = bar, bar.add_task(self.label, total=self.total, line=self.line())
            try:
                yield
            finally:
                self._bar = None


def _clock(seconds: float) -> str:
    return str(datetime.timedelta(seconds=round(seconds)))


@contextmanager
def rate_progress(label: str, unit: str, *, total: float | None = None,
                  every: float = 10.0) -> Iterator[RateProgress]:
    """Progress of ``label`` counted in ``unit`` (a total when known, else ``RateProgress.expect`` later) on the
    CLI's console, for index, index --sync and convert alike; yields what to call with each batch's count."""
    progress = RateProgress(label, unit, total, every)
    with progress.drawn():
        yield progress
    progress.finish()
