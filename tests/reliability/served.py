"""The real HTTP service on a free port, in a thread: what a client sees, status codes and bodies included."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import uvicorn

from tanglerag.runtime import Runtime
from tanglerag.service.app import create_app


@contextmanager
def serving(runtime: Runtime, *, warm_up: bool = True) -> Iterator[str]:
    """The service over ``runtime``, loopback only with no keys (every caller admin); yields its URL. A start that
    fails (the warm-up raised) is an AssertionError here."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(runtime, warm_up=warm_up), host="127.0.0.1", port=port,
                                           log_level="critical"))
    thread = threading.Thread(target=_run, args=(server,), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _run(server: uvicorn.Server) -> None:
    """uvicorn ends a failed start with SystemExit, which in a thread is only noise: the thread's end says it."""
    with suppress(SystemExit):
        server.run()
