"""Shared by the browser tests: Debian's chromium (Playwright downloads no browser offline), the service on a free
port in a thread, and screenshots into TANGLERAG_SCREENSHOTS."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("TANGLERAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_GROUP = pytest.mark.xdist_group("browser")
"""The browser tests share a worker: each module's chromium and server start once there, rather than on every worker
that happens to draw one of their tests."""
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium found: install Debian's 'chromium' package "
                                                              "(scripts/test.sh does) or set TANGLERAG_CHROMIUM")
SHOTS = os.environ.get("TANGLERAG_SCREENSHOTS")  # a folder: save a screenshot of each view there


@contextmanager
def serving(runtime, runs_dir: Path | None = None):
    """The service over ``runtime`` (and the eval runs under ``runs_dir``) on a free port, in a thread; yields
    its URL."""
    from tanglerag.service.app import create_app
    from tanglerag.testing import serve_app

    with serve_app(create_app(runtime, runs_dir=runs_dir), start_timeout_s=20) as url:
        yield url


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)
