"""No escape sequence from a corpus, a model or a server reaches a real terminal (a pty), and --json stays exact."""

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.cli.common import printable
from tanglerag.testing import fake_openai_server

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
RESET, DCS, TITLE = "\x1bc", "\x1bP1;2|evil\x1b\\", "\x1b]0;pwned\x07"
FOREIGN_ESCAPE = re.compile(rb"\x1b[^\[]")  # rich styles with CSI (ESC [); anything else came from the text
RICH_STYLE = re.compile(rb"\x1b\[[0-9;]*m")
runner = CliRunner()


def _on_a_terminal(*args: str, cwd: Path) -> bytes:
    """Run the CLI with stdout and stderr on a pseudo-terminal, as a person's shell would; returns what it drew."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tanglerag.cli", *args], cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the command finished
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks)


def test_printable_escapes_controls_but_keeps_newlines_tabs_and_unicode():
    assert printable(f"a{RESET}b\tc\nd\x9bé") == "a\\x1bcb\tc\nd\\x9bé"


def test_corpus_model_and_server_text_reach_a_terminal_escaped(tmp_path):
    rows = [{"id": "esc", "text": f"Berlin{RESET} is the capital{DCS} of Germany."},
            {"id": "fr", "text": "Paris is the capital of France."}]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    # BM25 retrieval: the terminal processes then never load the embedding model (seconds each, beside the point)
    common = ["--set", f"cache_dir={tmp_path / 'cache'}", "--set", "retrieval.mode=bm25"]
    built = runner.invoke(app, ["index", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "idx"), "--bm25", *common])
    assert built.exit_code == 0
    with fake_openai_server(lambda body: f"Berlin{TITLE} [1]", fail_first=1, status=400,
                            fail_body=f"bad request{RESET}".encode()) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}"]
        refused = _on_a_terminal("ask", "Capital of Germany?", "--index", "idx", *llm, *common, cwd=tmp_path)
        shown = _on_a_terminal("ask", "Capital of Germany?", "--index", "idx", *llm, *common, cwd=tmp_path)
        exact = runner.invoke(app, ["ask", "Capital of Germany?", "--index", str(tmp_path / "idx"), "--json", *llm,
                                    *common])
    text = {name: RICH_STYLE.sub(b"", output) for name, output in (("refused", refused), ("shown", shown))}
    assert b"error:" in text["refused"] and b"bad request\\x1bc" in text["refused"]
    assert b"Berlin\\x1b]0;pwned\\x07 [1]" in text["shown"] and b"Berlin\\x1bc is the capital" in text["shown"]
    for output in (refused, shown):
        assert FOREIGN_ESCAPE.search(output) is None, output
    assert json.loads(exact.stdout)["answer"] == f"Berlin{TITLE} [1]"  # --json keeps the model's bytes
