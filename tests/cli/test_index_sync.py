"""Issue 51 in real ``tanglerag`` processes: ``index FOLDER --sync`` after edits and deletions, on a folder of
documents as people have them (a PDF, a web page, Word, Markdown) holding a bad file that is skipped in one line."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import docx

from tests import hashing_cli
from tests.hashing_cli import HASHING_CLI
from tests.index.stored import stored_passages

DOCUMENTS = Path(__file__).parents[1] / "data" / "documents"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}


def _cli(*args: str, code: int = 0) -> str:
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == code and "Traceback" not in said, said
    return said


def _progress_lines(said: str) -> list[tuple[str, str]]:
    """The plain progress lines of piped output (done, total), each with a rate and the time left; no bar drawn."""
    assert "\r" not in said and "\x1b" not in said, said
    return re.findall(r"^indexing: ([\d,]+)/([\d,]+) passages · [\d,.]+ passages/s · ETA \d+:\d\d:\d\d$", said,
                      re.MULTILINE)


def test_index_folder_sync_after_edits_and_deletions(tmp_path):
    docs, out = tmp_path / "docs", tmp_path / "idx"
    (docs / "web").mkdir(parents=True)
    shutil.copy(DOCUMENTS / "reportlab-userguide-p6-11.pdf", docs / "guide.pdf")
    shutil.copy(DOCUMENTS / "The-Basics.html", docs / "web" / "basics.html")
    word = docx.Document()
    word.add_heading("Leave", 1)
    word.add_paragraph("Staff take five days of leave.")
    word.save(str(docs / "policy.docx"))
    (docs / "notes.md").write_text("# Notes\nThe lighthouse opens at nine.\n")
    (docs / "broken.pdf").write_text("not really a PDF")
    common = ["--out", str(out), "--set", f"cache_dir={tmp_path / 'cache'}"]

    said = _cli("index", str(docs), "--sync", *common)
    assert "sync " in said and "5 files: 5 new, 0 changed, 0 deleted, 0 unchanged" in said
    assert [line for line in said.splitlines() if "broken.pdf" in line] == [
        next(line for line in said.splitlines() if "skipping" in line)]  # one line for the bad file
    assert "not a PDF" in said
    assert _progress_lines(said)  # piped: plain lines, not a bar
    first = {p.id: p.metadata for p in stored_passages(out)}
    assert {m["path"] for m in first.values()} == {"guide.pdf", "web/basics.html", "policy.docx", "notes.md"}
    assert all("page" in m for m in first.values() if m["path"] == "guide.pdf")

    (docs / "notes.md").write_text("# Notes\nThe lighthouse now opens at ten.\n")
    (docs / "policy.docx").unlink()
    (docs / "broken.pdf").unlink()
    (docs / "memo.docx").write_text("a memo saved as text")  # a new bad file, read by the plan and the write
    said = _cli("index", str(docs), "--sync", *common)
    assert "4 files: 1 new, 1 changed, 1 deleted, 2 unchanged" in said, said
    assert len([line for line in said.splitlines() if "memo.docx" in line]) == 1, said
    assert _progress_lines(said) == [("1", "1")]  # the changed file's one passage, of the one the plan counted
    after = {p.id: p for p in stored_passages(out)}
    assert {p.metadata["path"] for p in after.values()} == {"guide.pdf", "web/basics.html", "notes.md"}
    assert after["notes.md"].text == "# Notes\nThe lighthouse now opens at ten."
    assert {pid: m for pid, m in first.items() if m["path"] in {"guide.pdf", "web/basics.html"}} == {
        pid: p.metadata for pid, p in after.items() if p.metadata["path"] in {"guide.pdf", "web/basics.html"}}

    (docs / "memo.docx").unlink()
    said = _cli("index", str(docs), "--sync", *common)
    assert "3 files: 0 new, 0 changed, 0 deleted, 3 unchanged" in said and "nothing written" in said


KILLED_WHILE_EMBEDDING = f"""
import os, runpy, signal
import tanglerag.embeddings

hashing = runpy.run_path({hashing_cli.__file__!r})  # the embedder the index was built with
hashing["use_hashing"]()

def die(self, texts, **kwargs):  # the sync has read the changed files and starts embedding them: kill -9
    os.kill(os.getpid(), signal.SIGKILL)

tanglerag.embeddings.Embedder.embed = die
hashing["main"]()
"""


def test_a_sync_killed_with_kill_9_leaves_the_index_as_it_was_and_the_next_sync_finishes(tmp_path):
    docs, out = tmp_path / "docs", tmp_path / "idx"
    docs.mkdir()
    (docs / "a.md").write_text("# A\nThe ferry leaves at six.\n")
    (docs / "b.md").write_text("# B\nThe museum closes on Mondays.\n")
    common = ["--out", str(out), "--set", f"cache_dir={tmp_path / 'cache'}"]
    _cli("index", str(docs), "--sync", *common)
    before = {p.id: p.text for p in stored_passages(out)}
    (docs / "a.md").write_text("# A\nThe ferry now leaves at seven.\n")
    (docs / "b.md").unlink()
    (docs / "c.md").write_text("# C\nThe library opens at ten.\n")
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_EMBEDDING, "index", str(docs), "--sync", *common],
                            env=ENV, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert {p.id: p.text for p in stored_passages(out)} == before  # nothing half-synced, nothing lost
    said = _cli("index", str(docs), "--sync", *common)
    assert "2 files: 1 new, 1 changed, 1 deleted, 0 unchanged" in said, said
    assert {p.metadata["path"]: p.text for p in stored_passages(out)} == {
        "a.md": "# A\nThe ferry now leaves at seven.", "c.md": "# C\nThe library opens at ten."}
