"""`ask --json` on a real terminal (a pty) writes C1 controls escaped; piped, its bytes are the model's (issue 49)."""

from __future__ import annotations

import json
import subprocess
import sys

from tanglerag.embeddings import Embedder
from tanglerag.index.passage_index import store_passages
from tanglerag.settings import Settings
from tanglerag.testing import fake_openai_server
from tests.reliability.test_terminal import ENV, _on_a_terminal
from tests.service.conftest import CORPUS

CSI = "\x9b"  # one character that a terminal may obey as ESC [
REPLY = f"Paris{CSI}2J{CSI}31m is the capital [1]"


def test_ask_json_escapes_c1_controls_on_a_terminal_and_keeps_them_when_piped(tmp_path):
    # the default embedder (no torch) and BM25 retrieval: the processes embed nothing
    store_passages(tmp_path / "idx", CORPUS, Embedder(), Settings.load(overrides=["index.bm25=true"]).index)
    with fake_openai_server(lambda body: REPLY) as server:
        args = ["ask", "What is the capital of France?", "--index", "idx", "--json", "--set", "llm.backend=openai",
                "--set", f"llm.base_url={server['base_url']}", "--set", "llm.cache=false",
                "--set", "retrieval.mode=bm25"]
        drawn = _on_a_terminal(*args, cwd=tmp_path)
        piped = subprocess.run([sys.executable, "-m", "tanglerag.cli", *args], cwd=tmp_path, env=ENV,
                               capture_output=True, check=True).stdout
    assert CSI.encode() not in drawn and b"\x1b" not in drawn, drawn
    shown = json.loads(drawn.decode().replace("\r\n", "\n"))
    assert shown["answer"] == REPLY  # the escape reads back as the same character
    assert b'"answer": "Paris\\u009b2J\\u009b31m is the capital [1]"' in drawn
    assert CSI.encode() in piped and json.loads(piped)["answer"] == REPLY  # piped: byte-exact
