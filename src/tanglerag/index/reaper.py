"""The processes a command starts for a local Ray die with it, however it ends (``index --engine ray``).

``ray.init`` starts a local cluster whose GCS and raylet the kernel kills when the driver dies, but the raylet's two
agents (dashboard and runtime-env, about 170 MB together) first try for a minute to tell the dead GCS that the raylet
died: a ``kill -9`` of the command left them running that long. So beside the local Ray runs a small watchdog: it
notes every process started below the driver while the driver lives, and once its pipe from the driver closes (the
driver ended: normally, on an error or killed) it kills those still there. It runs this file by path with ``-I``, so
it loads no more than Python's standard library. It reads /proc: elsewhere Ray's agents still end after their minute.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

POLL_S = 0.5
"""How often the watchdog looks for new processes below the driver (Ray starts its workers as they are needed)."""


@contextmanager
def dies_with_this_process() -> Iterator[None]:
    """Every process started below this one during the block is killed when the block ends or this process does,
    however it ends (the watchdog's pipe closes either way); processes that were already there are left alone."""
    if not Path("/proc/self/stat").exists():
        yield
        return
    before = [str(pid) for pid in _children().get(os.getpid(), [])]
    with subprocess.Popen([sys.executable, "-I", __file__, str(os.getpid()), *before], stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True):
        yield  # leaving closes the watchdog's pipe (what is still there goes now) and waits for it


def _children() -> dict[int, list[int]]:
    """Each process's children, from /proc (a process that ends while it is read is left out)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        stat = _stat(entry.name) if entry.name.isdigit() else None
        if stat is not None:
            children.setdefault(int(stat[1]), []).append(int(entry.name))
    return children


def _stat(pid: str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, parent, ...; the start time is the 20th)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _below(root: int, spared: set[int]) -> dict[int, str]:
    """Every process below ``root`` but those in ``spared`` and below them: its start time, which tells it from a
    later process given the same number."""
    children, found = _children(), {}
    todo = [pid for pid in children.get(root, []) if pid not in spared]
    while todo:
        pid = todo.pop()
        stat = _stat(str(pid))
        if stat is not None:
            found[pid] = stat[19]
            todo += children.get(pid, [])
    return found


def _watch(driver: int, spared: set[int]) -> None:
    """Note the processes below ``driver`` until its pipe closes, then kill those still running."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the driver's to handle; its end is this one's cue
    seen: dict[int, str] = {}
    while not select.select([sys.stdin], [], [], POLL_S)[0] or os.read(sys.stdin.fileno(), 1024):
        seen.update(_below(driver, spared))
    for pid, started in seen.items():
        stat = _stat(str(pid))
        if stat is not None and stat[19] == started and stat[0] != "Z":
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    _watch(int(sys.argv[1]), {os.getpid(), *map(int, sys.argv[2:])})
