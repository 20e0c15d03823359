"""Issue 59 (reliability round 4), documents: ingest reads only regular files inside the folder; a file its parser
refuses, or one past a declared ingest bound, is that file's one warning and never the folder's (``index``,
``index --sync``, an HTTP upload); metadata is only what the document states, and its numbers are finite. Each test
drives the real ``tanglerag`` process, the real service or the real loaders on files built here as a hostile user
would."""

import io
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import docx
import pypdf
import pytest

from tanglerag.errors import IngestError, InputError
from tanglerag.ingest import load_corpus
from tanglerag.loaders import UnreadableFile, bounds
from tanglerag.loaders.pdf import load_pdf
from tests.hashing_cli import HASHING_CLI
from tests.index.stored import stored_passages
from tests.service.conftest import client_for, make_runtime

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
GUIDE = Path(__file__).parents[1] / "data" / "documents" / "reportlab-userguide-p6-11.pdf"
LAUGHS = "---\n" + "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)) + "---\nBody.\n"
"""YAML's "billion laughs": 466 bytes whose aliases expand to 9**9 strings."""


def _cli(*args: str, code: int = 0) -> list[str]:
    """Run the CLI, expect ``code`` (2: a user error) and no traceback; the lines it said."""
    run = subprocess.run([*HASHING_CLI, *args], env=ENV, capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == code and "Traceback" not in said, said
    return [" ".join(line.split()) for line in said.splitlines() if line.strip()]


def _said_once(lines: list[str], name: str, reason: str) -> None:
    """``name`` is named by exactly one line, and that line gives ``reason``."""
    naming = [line for line in lines if name in line]
    assert len(naming) == 1 and reason in naming[0], (name, reason, lines)


def _word(*paragraphs: str) -> bytes:
    document, buffer = docx.Document(), io.BytesIO()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(buffer)
    return buffer.getvalue()


def _repacked(data: bytes, *, drop: tuple[str, ...] = (), parts: dict[str, bytes] | None = None) -> bytes:
    """A Word file's zip with the parts in ``drop`` left out and those in ``parts`` written instead."""
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            if name not in drop:
                target.writestr(name, (parts or {}).get(name, source.read(name)))
    return buffer.getvalue()


def _without_core_properties(data: bytes) -> bytes:
    """A Word file as many tools write it: no ``docProps/core.xml``, and no relationship naming one."""
    rels = zipfile.ZipFile(io.BytesIO(data)).read("_rels/.rels").decode()
    rels = re.sub(r"<Relationship [^>]*core-properties[^>]*/>", "", rels)
    return _repacked(data, drop=("docProps/core.xml",), parts={"_rels/.rels": rels.encode()})


def _with_body(data: bytes, body: bytes) -> bytes:
    return _repacked(data, parts={"word/document.xml": body})


def _entity_bomb(data: bytes) -> bytes:
    document = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    entities = "".join(f'<!ENTITY {b} "{("&" + a + ";") * 10}">' for a, b in zip("abcdefg", "bcdefgh", strict=True))
    doctype = f'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">{entities}]>'
    return _with_body(data, (doctype + document[document.index("<w:document"):]).replace(
        "Minutes", "&h;").encode())


def _zip_bomb(data: bytes) -> bytes:
    """A Word file of a few hundred KB whose document part unpacks to 60 MB."""
    document = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    return _with_body(data, document.replace(b"Minutes", b"a" * 60_000_000))


def _pdf_of_pages(count: int) -> bytes:
    """A PDF whose page tree names one small page ``count`` times: 100,000 pages in 600 KB."""
    stream = b"BT /F1 12 Tf 10 10 Td (lighthouse keeper) Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [" + b"3 0 R " * count + b"] /Count %d >>" % count,
               (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 50] /Contents 4 0 R "
                b"/Resources << /Font << /F1 5 0 R >> >> >>"),
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"xref\n0 6\n0000000000 65535 f \n%strailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        table, len(out))


def _pdf_under_unsupported_encryption() -> bytes:
    """The guide encrypted, its security handler renamed to one pypdf does not implement (certificate security)."""
    writer, buffer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(GUIDE)), io.BytesIO()
    writer.encrypt("", algorithm="RC4-128")
    writer.write(buffer)
    assert b"/Filter /Standard" in buffer.getvalue()
    return buffer.getvalue().replace(b"/Filter /Standard", b"/Filter /PubSec  ")


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Amundsen kept the lighthouse on the harbour.")
    return docs


def _stored(index: Path) -> dict[str, tuple[str, dict]]:
    return {p.id: (p.title, {k: v for k, v in p.metadata.items() if k != "sha256"}) for p in stored_passages(index)}


def test_a_word_file_without_core_properties_gets_no_made_up_title_or_date(tmp_path):
    """python-docx fills a missing ``docProps/core.xml`` with its defaults (the title 'Word Document', today's date):
    taken as the file's own, an undated note looked newest to ``--where date >= ...`` and the ``newest`` policy."""
    docs = _folder(tmp_path)
    (docs / "minutes.docx").write_bytes(_without_core_properties(_word("Minutes of the harbour board.")))
    (docs / "stated.docx").write_bytes(_word("Stated by its core properties."))
    _cli("index", str(docs), "--out", str(tmp_path / "idx"))
    stored = _stored(tmp_path / "idx")
    assert stored["minutes.docx"] == ("minutes", {"path": "minutes.docx"})
    stated = docx.Document(str(docs / "stated.docx")).core_properties
    assert stored["stated.docx"][1]["date"] == stated.created.date().isoformat()  # what the file states is kept


def test_folder_ingest_reads_only_regular_files_inside_the_folder_on_index_and_sync(tmp_path):
    """A link out of the folder (to a private file, to /proc/self/environ) was indexed and served by ``ask``; a FIFO
    was passed over silently. Each is now one warning, a link that stays inside is read as its target."""
    docs, outside = _folder(tmp_path), tmp_path / "outside"
    outside.mkdir()
    (outside / "vault.txt").write_text("The vault code is 4512.")
    (docs / "inside.txt").symlink_to("good.txt")
    (docs / "vault.txt").symlink_to(outside / "vault.txt")
    (docs / "environ.txt").symlink_to("/proc/self/environ")
    (docs / "relative.txt").symlink_to("../outside/vault.txt")
    os.mkfifo(docs / "pipe.txt")
    for args in (["--out", str(tmp_path / "idx")], ["--out", str(tmp_path / "synced"), "--sync"]):
        said = _cli("index", str(docs), *args)
        for name in ("vault.txt", "environ.txt", "relative.txt"):
            _said_once(said, name, "a link out of the folder")
        _said_once(said, "pipe.txt", "not a regular file")
        assert sorted(_stored(Path(args[1]))) == ["good.txt", "inside.txt"]
        assert not any("4512" in p.text or "HF_HUB_OFFLINE" in p.text for p in stored_passages(Path(args[1])))


def test_a_file_its_parser_refuses_is_that_files_one_warning_and_the_rest_is_indexed(tmp_path):
    """lxml's refusals (entity expansion, cut-off XML), encryption pypdf does not implement, and a name that is not
    UTF-8 were tracebacks that indexed nothing of the folder."""
    docs, word = _folder(tmp_path), _word("Minutes of the harbour board.")
    (docs / "entities.docx").write_bytes(_entity_bomb(word))
    body = zipfile.ZipFile(io.BytesIO(word)).read("word/document.xml")
    (docs / "cut.docx").write_bytes(_with_body(word, body[:len(body) // 2]))
    (docs / "locked.pdf").write_bytes(_pdf_under_unsupported_encryption())
    (docs / os.fsdecode(b"caf\xe9.txt")).write_text("A note whose name is Latin-1.")
    said = _cli("index", str(docs), "--out", str(tmp_path / "idx"))
    _said_once(said, "entities.docx", "damaged or not a Word document")
    _said_once(said, "cut.docx", "damaged or not a Word document")
    _said_once(said, "locked.pdf", "uses a PDF feature pypdf does not implement (only Standard PDF encryption")
    _said_once(said, "caf\\xe9.txt", "its name is not UTF-8")
    assert sorted(_stored(tmp_path / "idx")) == ["good.txt"]


def test_files_past_a_declared_bound_are_each_one_warning_naming_the_bound(tmp_path):
    """A 274 KB Word zip bomb took 213 s and 2.5 GB, a 600 KB PDF of 100,000 pages and an HTML page of millions of
    elements as much again: each is refused before the work, saying which bound it passed."""
    docs = _folder(tmp_path)
    (docs / "report.docx").write_bytes(_zip_bomb(_word("Minutes of the harbour board.")))
    (docs / "pages.pdf").write_bytes(_pdf_of_pages(100_000))
    (docs / "crowded.html").write_bytes(b"<html><body>" + b"<p>x</p>" * (bounds.HTML_ELEMENTS + 1) + b"</body></html>")
    assert (docs / "report.docx").stat().st_size < 300_000 and (docs / "pages.pdf").stat().st_size < 700_000
    said = _cli("index", str(docs), "--out", str(tmp_path / "idx"))
    _said_once(said, "report.docx", "its zip unpacks to more than 50 MB beyond its own size (ingest bound)")
    _said_once(said, "pages.pdf", "100,000 pages, over the 10,000-page ingest bound")
    _said_once(said, "crowded.html", "over 1,000,000 elements (ingest bound)")
    assert sorted(_stored(tmp_path / "idx")) == ["good.txt"]


def test_an_upload_gets_the_same_refusals_and_metadata_as_a_folder(tmp_path):
    word = _word("Minutes of the harbour board.")
    with client_for(make_runtime(tmp_path)) as client:
        for name, data, reason in [("entities.docx", _entity_bomb(word), "entities.docx: damaged or not a Word"),
                                   ("report.docx", _zip_bomb(word), "report.docx: its zip unpacks to more than 50 MB"),
                                   ("locked.pdf", _pdf_under_unsupported_encryption(), "locked.pdf: uses a PDF feature")]:
            r = client.post("/v1/index/documents", files=[("files", (name, data, "application/octet-stream"))])
            assert r.status_code == 400 and r.json()["error"].startswith(reason), r.text
        r = client.post("/v1/index/documents", files=[("files", ("minutes.docx", _without_core_properties(word),
                                                                 "application/octet-stream"))])
        assert r.status_code == 200, r.text
    stored = {p.id: p for p in stored_passages(tmp_path / "index")}
    assert stored["minutes.docx"].title == "minutes" and "date" not in stored["minutes.docx"].metadata


def test_front_matter_aliases_are_refused_in_one_line_before_they_expand(tmp_path):
    """466 bytes of nested YAML aliases grew memory without end; front matter takes no aliases (nor a merge key). In a
    folder the file is skipped with its one warning and the rest is indexed; given alone, it is refused."""
    docs = _folder(tmp_path)
    (docs / "laughs.md").write_text(LAUGHS)
    said = _cli("index", str(docs), "--out", str(tmp_path / "idx"), code=0)
    assert any("skipping" in line and "laughs.md: front matter uses an alias (*a) at line 3" in line
               for line in said), said
    assert "laughs.md" not in {p.id for p in load_corpus(docs)}
    (docs / "laughs.md").write_text("---\nbase: &b {source: wiki}\nmeta:\n  <<: *b\n---\nBody.\n")
    with pytest.raises(IngestError, match=r"laughs\.md: front matter uses an alias \(\*b\) at line 4"):
        load_corpus(docs / "laughs.md")
    (docs / "laughs.md").write_text("---\nsource: " + "w" * bounds.FRONT_MATTER_BYTES + "\n---\nBody.\n")
    with pytest.raises(IngestError, match=r"laughs\.md: front matter is over 64 KB \(ingest bound\)"):
        load_corpus(docs / "laughs.md")


def test_a_pdf_whose_pages_take_past_the_time_bound_is_refused_naming_it(monkeypatch):
    monkeypatch.setattr(bounds, "PDF_SECONDS", 0.0)
    with pytest.raises(UnreadableFile, match=r"^guide\.pdf: reading its pages took over 0 s \(ingest bound\); "
                                             r"1 of 6 read$"):
        load_pdf("guide.pdf", GUIDE.read_bytes())


def test_a_record_giving_a_field_twice_with_two_values_is_refused_naming_it(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "x", "date": "2024-05-01", "metadata": {"date": "2020"}}) + "\n")
    said = _cli("index", str(corpus), "--out", str(tmp_path / "idx"), code=2)
    assert any(f"{corpus}:1: field 'date' is given twice" in line for line in said), said
    corpus.write_text(json.dumps({"id": "a", "text": "x", "date": "2020", "metadata": {"date": "2020"}}) + "\n")
    assert load_corpus(corpus)[0].metadata == {"date": "2020"}


@pytest.mark.parametrize("name, content, message", [
    ("a.jsonl", '{"id": "a", "text": "x", "authority": NaN}\n', "metadata field 'authority': nan is not a finite"),
    ("a.jsonl", '{"id": "a", "text": "x", "authority": -Infinity}\n', "'authority': -inf is not a finite number"),
    ("a.jsonl", '{"id": "a", "text": "x", "meta": {"score": Infinity}}\n', "field 'meta.score': inf is not a finite"),
    ("a.md", "---\nauthority: .inf\n---\nBody.\n", "a.md: front matter field 'authority': inf is not a finite"),
    ("a.md", "---\nmeta: {score: .nan}\n---\nBody.\n", "a.md: front matter field 'meta.score': nan is not a finite"),
])
def test_numbers_that_are_not_finite_are_refused_naming_the_field(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=re.escape(message)):
        load_corpus(tmp_path / name)


def test_a_title_made_from_a_file_name_holds_no_control_characters(tmp_path):
    docs = _folder(tmp_path)
    (docs / "two\nlines\tand_more.txt").write_text("A note with an awkward name.")
    _cli("index", str(docs), "--out", str(tmp_path / "idx"))
    assert _stored(tmp_path / "idx")["two\nlines\tand_more.txt"][0] == "two lines and more"
