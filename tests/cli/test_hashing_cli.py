"""The hashing stand-in for the real-process tests (tests/hashing_cli.py) is only worth having while a command on it
never imports torch: this keeps the slow model load from coming back unnoticed."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hashing_cli import HASHING_CLI

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
REPORT = "import atexit, sys; atexit.register(lambda: print('torch loaded:', 'torch' in sys.modules)); "


def test_an_index_built_on_the_hashing_cli_is_embedded_without_importing_torch(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"passage number {i} about tea"})
                              + "\n" for i in range(3)))
    command = [sys.executable, "-c", REPORT + HASHING_CLI[-1]]
    index = tmp_path / "idx"
    cache = f"cache_dir={tmp_path / 'cache'}"
    built = subprocess.run([*command, "index", str(corpus), "--out", str(index), "--set", cache], env=ENV,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0 and "3 passages" in built.stdout + built.stderr, built.stdout + built.stderr
    assert "torch loaded: False" in built.stdout
