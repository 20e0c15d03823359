"""Write-then-rename helpers and a writer lock.

A crash mid-write never leaves a half-written file in place, and two processes that update the same
store take turns (``file_lock``) instead of the last writer silently winning.
"""

from __future__ import annotations

import errno
import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from filelock import FileLock

from tanglerag.errors import DiskFullError

FILE_MODE = 0o644  # what a plain open() would give under the usual umask (mkstemp alone gives 0600)
PRIVATE_MODE = 0o600  # a user's contexts and the LLM cache: readable by their owner only, like index data
_FULL = {errno.ENOSPC, errno.EDQUOT}


@contextmanager
def reporting_disk_full(path: Path) -> Iterator[None]:
    """Turn running out of space while writing under ``path`` into one clear ``DiskFullError``."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _FULL:
            raise DiskFullError(f"no space left on {path}: free some space and run it again "
                                "(what was stored before is kept)") from exc
        raise


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the block; waits for other holders, in this
    process (other threads) and in others.

    Read what you are about to change *inside* the block: what was read before may be stale.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path, thread_local=False, preserve_lock_file=True):
        yield


def atomic_write_bytes(path: Path, payload: bytes, mode: int = FILE_MODE) -> None:
    with reporting_disk_full(path.parent):
        _write_then_rename(path, payload, mode)


def _write_then_rename(path: Path, payload: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def atomic_write_npy(path: Path, array: np.ndarray, mode: int = FILE_MODE) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array, dtype="float32"))
    atomic_write_bytes(path, buffer.getvalue(), mode)
