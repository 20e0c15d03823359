"""A real Chroma server for the tests: ``chroma run --path FOLDER --port FREE`` (the console script that comes with
chromadb) in a subprocess, ready once its heartbeat answers, stopped at the end. Tests that need it are skipped,
with the reason, on a machine without the script."""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

READY_WITHIN_S = 60.0
"""Long enough for a start on two busy cores (some 2 s on a quiet one)."""


@dataclass
class ChromaServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def chroma_script() -> str | None:
    """The ``chroma`` console script beside this Python (a virtualenv's bin), else on PATH."""
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.is_file() else shutil.which("chroma")


def start_server(folder: Path) -> ChromaServer:
    """A Chroma server keeping its data in ``folder``, answering on a free local port; skips without the script."""
    script = chroma_script()
    if script is None:
        pytest.skip("the chroma console script (from chromadb) is not installed: no Chroma server to test against")
    port = _free_port()
    log = folder / "chroma-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen([script, "run", "--path", str(folder / "data"), "--host", "127.0.0.1",
                                    "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    server = ChromaServer(f"http://127.0.0.1:{port}", process, log)
    _wait_ready(server)
    return server


def _wait_ready(server: ChromaServer) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"chroma run exited with {server.process.returncode}: {server.log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{server.url}/api/v2/heartbeat", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"chroma run did not answer its heartbeat within {READY_WITHIN_S:g} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_shared: ChromaServer | None = None


def shared_server() -> ChromaServer:
    """One server for this test process, started on first use and stopped when the process ends (or by
    ``stop_shared``); tests keep apart by collection name."""
    global _shared
    if _shared is None or _shared.process.poll() is not None:
        _shared = start_server(Path(tempfile.mkdtemp(prefix="chroma-server-")))
    return _shared


@atexit.register
def stop_shared() -> None:
    global _shared
    if _shared is not None:
        _shared.stop()
        shutil.rmtree(_shared.log.parent, ignore_errors=True)
    _shared = None
