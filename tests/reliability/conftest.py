"""A real small filesystem to fill up: full-disk behaviour is tested on a tmpfs, not on a mocked ``write``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted under tmp_path (needs root; skips with the reason otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> None:
    """Take every free block of ``disk`` (the filler file stays, so writes after this fail with ENOSPC)."""
    handle = open(disk / "filler", "wb", buffering=0)  # noqa: SIM115  # closing flushes nothing; ENOSPC is expected
    for size in (65536, 512, 1):
        try:
            while True:
                handle.write(b"\0" * size)
        except OSError:
            pass
    handle.close()
