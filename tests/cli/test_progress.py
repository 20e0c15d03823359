"""``rate_progress``, the progress of index, index --sync and convert: the rate and the time left from the first batch,
a bar on a terminal and plain lines when piped (a log file, CI, ``tee``) instead of a bar's control sequences."""

import io
import re

import pytest

from tanglerag.cli import common
from tanglerag.cli.common import TerminalConsole, rate_progress

LINE = re.compile(r"^indexing: ([\d,]+)/([\d,]+) passages · ([\d,.]+) passages/s · ETA \d+:\d\d:\d\d$")


@pytest.fixture
def piped(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(common, "console", TerminalConsole(file=out, force_terminal=False))
    return out


def test_piped_progress_is_plain_lines_with_a_rate_and_the_time_left(piped):
    with rate_progress("indexing", "passages", total=3000, every=0) as advance:
        for _ in range(3):
            advance(1000)
    lines = piped.getvalue().splitlines()
    assert [LINE.match(line).group(1, 2) for line in lines] == [("1,000", "3,000"), ("2,000", "3,000"),
                                                                 ("3,000", "3,000")], lines
    assert float(LINE.match(lines[0]).group(3).replace(",", "")) > 0  # a rate from the first batch on
    assert "\x1b" not in piped.getvalue() and "\r" not in piped.getvalue()


def test_piped_lines_are_spaced_out_and_the_last_count_is_always_said(piped):
    with rate_progress("indexing", "passages", total=5, every=3600) as advance:
        for _ in range(5):
            advance(1)
    assert [LINE.match(line).group(1) for line in piped.getvalue().splitlines()] == ["1", "5"]


def test_a_total_known_later_gives_the_time_left_from_then(piped):
    with rate_progress("indexing", "passages", every=0) as progress:
        progress.expect(40)
        progress(10)
    assert LINE.match(piped.getvalue().strip()).group(1, 2) == ("10", "40")


def test_without_a_total_the_line_says_the_time_spent(piped):
    with rate_progress("converting", "passages", every=0) as advance:
        advance(2048)
    assert re.fullmatch(r"converting: 2,048 passages · [\d,.]+ passages/s · \d+:\d\d:\d\d elapsed\n",
                        piped.getvalue())


def test_on_a_terminal_the_bar_shows_the_rate_and_time_left_after_one_batch(monkeypatch):
    monkeypatch.setattr(common, "console", TerminalConsole(file=io.StringIO(), force_terminal=True))
    with rate_progress("indexing", "passages", total=2048) as progress:
        progress(1024)
        assert re.fullmatch(r"1,024/2,048 passages · [\d,.]+ passages/s · ETA \d+:\d\d:\d\d", progress.line())
        assert not progress.line().startswith("1,024/2,048 passages · -")
