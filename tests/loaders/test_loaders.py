"""The loaders on real files (a ReportLab manual's pages, libffi's HTML manual: tests/data/documents/README.md) and
on files built here (Word, encrypted and broken PDFs, Markdown)."""

import io
import subprocess
from pathlib import Path

import docx
import pypdf
import pytest

from tanglerag.loaders import LOADERS, UnreadableFile, extension, loader_for
from tanglerag.loaders.html import load_html
from tanglerag.loaders.pdf import load_pdf, pdf_date
from tanglerag.loaders.text import load_markdown, markdown_sections

DATA = Path(__file__).parents[1] / "data" / "documents"
PDF = DATA / "reportlab-userguide-p6-11.pdf"


def test_one_loader_per_type_by_extension():
    assert {"txt", "md", "pdf", "html", "htm", "docx"} <= set(LOADERS.names())
    assert loader_for("a/Policy.PDF") is load_pdf and loader_for("notes.rtf") is None
    assert extension("x.tar.gz") == "gz" and extension(".bashrc") == "" and extension("README") == ""


def test_a_pdf_is_read_page_by_page_with_its_title_author_and_date():
    loaded = load_pdf(PDF.name, PDF.read_bytes())
    assert [s.page for s in loaded.segments] == [1, 2, 3, 4, 5, 6]
    assert loaded.segments[0].text.startswith("Chapter 1 Introduction\n1.1 About this document")
    assert "1.2 What is the ReportLab PDF Library?" in loaded.segments[0].text and "Page 7" in loaded.segments[1].text
    assert loaded.title == "ReportLab PDF Generation User Guide"
    assert loaded.detected == {"author": "the ReportLab Team", "date": "2024-10-12"}


@pytest.mark.skipif(subprocess.run(["which", "pdftotext"], capture_output=True).returncode != 0,
                    reason="pdftotext (poppler-utils) is the reference")
def test_pdf_text_matches_pdftotext_page_by_page():
    reference = subprocess.run(["pdftotext", "-enc", "UTF-8", str(PDF), "-"], capture_output=True, text=True,
                               check=True).stdout.split("\f")
    loaded = load_pdf(PDF.name, PDF.read_bytes())
    for segment in loaded.segments:
        ours, theirs = "".join(segment.text.split()), "".join(reference[segment.page - 1].split())
        assert sorted(ours) == sorted(theirs)  # every character of the page, on the same page


def test_a_pdfs_bookmarks_name_the_section_of_each_page():
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(PDF))
    chapter = writer.add_outline_item(title="Chapter 1 Introduction", page_number=0)
    writer.add_outline_item(title="1.3 ReportLab's commercial software", page_number=2, parent=chapter)
    loaded = load_pdf("guide.pdf", _bytes(writer))
    assert [s.section for s in loaded.segments[1:4]] == [
        ["Chapter 1 Introduction"], ["Chapter 1 Introduction", "1.3 ReportLab's commercial software"],
        ["Chapter 1 Introduction", "1.3 ReportLab's commercial software"]]


def test_bad_pdfs_are_refused_saying_why():
    good = PDF.read_bytes()
    locked = pypdf.PdfWriter(clone_from=pypdf.PdfReader(PDF))
    locked.encrypt("secret", algorithm="RC4-128")
    blank = pypdf.PdfWriter()
    blank.add_blank_page(612, 792)
    cases = {"locked.pdf": (_bytes(locked), "encrypted PDF"),
             "blank.pdf": (_bytes(blank), r"no text in its 1 page\(s\) \(scanned or image-only"),
             "page.pdf": (b"<html><body>saved page</body></html>", "not a PDF .*extension"),
             "cut.pdf": (good[:2000], "damaged PDF|no text")}
    for name, (data, reason) in cases.items():
        with pytest.raises(UnreadableFile, match=f"^{name}: {reason}"):
            load_pdf(name, data)


def test_pdf_dates_keep_the_precision_they_give():
    assert pdf_date("D:20241012171435+00'00'") == "2024-10-12"
    assert pdf_date("D:2024") == "2024" and pdf_date("D:202402") == "2024-02"
    assert pdf_date("D:20240231") is None and pdf_date("yesterday") is None and pdf_date(None) is None


def test_html_main_text_without_navigation_cut_at_headings():
    page = DATA / "The-Basics.html"
    loaded = load_html(page.name, page.read_bytes())
    assert loaded.title == "The Basics (libffi: the portable foreign function interface library)"
    (section,) = loaded.segments
    assert section.section == ["2.1 The Basics"] and section.text.startswith("2.1 The Basics\n\nlibffi assumes")
    assert "Next:" not in section.text and "ffi_prep_cif" in section.text


def test_html_metadata_date_author_and_canonical_address():
    html = b"""<html><head><title>Leave policy</title><link rel="canonical" href="https://hr.example/leave">
    <meta property="article:published_time" content="2024-03-05T10:00:00Z"><meta name="author" content="HR team">
    <script>var x = 1;</script></head><body><nav>Home | About</nav><header>Site banner</header>
    <main><h1>Leave</h1><p>Intro.</p><h2>Scope</h2><p>All staff.</p><h3>Limits</h3><p>Five days.</p></main>
    <footer>(c) site</footer></body></html>"""
    loaded = load_html("leave.html", html)
    assert loaded.detected == {"date": "2024-03-05", "author": "HR team", "url": "https://hr.example/leave"}
    assert [(s.section, s.text) for s in loaded.segments] == [
        (["Leave"], "Leave\n\nIntro."), (["Leave", "Scope"], "Scope\n\nAll staff."),
        (["Leave", "Scope", "Limits"], "Limits\n\nFive days.")]
    with pytest.raises(UnreadableFile, match="^empty.html: no text"):
        load_html("empty.html", b"<html><body><nav>menu only</nav></body></html>")


def test_word_paragraphs_tables_and_headings_as_sections():
    from tanglerag.loaders.docx import load_docx

    document = docx.Document()
    document.core_properties.author, document.core_properties.title = "Ada", "Leave policy"
    document.add_heading("Leave", 1)
    document.add_paragraph("Intro.")
    document.add_heading("Limits", 2)
    document.add_paragraph("Five days.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "staff", "5"
    loaded = load_docx("leave.docx", _bytes(document))
    assert loaded.title == "Leave policy" and loaded.detected["author"] == "Ada"
    assert [(s.section, s.text) for s in loaded.segments] == [
        (["Leave"], "Leave\nIntro."), (["Leave", "Limits"], "Limits\nFive days.\nstaff | 5")]
    with pytest.raises(UnreadableFile, match=r"^old.docx: not a Word .docx file"):
        load_docx("old.docx", b"\xd0\xcf\x11\xe0 an OLE .doc")
    with pytest.raises(UnreadableFile, match=r"^zip.docx: damaged or not a Word document"):
        load_docx("zip.docx", _zip())


def test_markdown_headings_outside_code_make_the_section_path():
    segments, title = markdown_sections("intro\n# Policy\ntext\n## Scope\n```\n# not a heading\n```\nLimits\n---\nfive")
    assert title == "Policy"
    assert [(s.section, s.text) for s in segments] == [
        ([], "intro"), (["Policy"], "# Policy\ntext"), (["Policy", "Scope"], "## Scope\n```\n# not a heading\n```"),
        (["Policy", "Limits"], "Limits\n---\nfive")]
    loaded = load_markdown("n.md", b"---\ntitle: Own title\n---\n# Heading\nbody\n")
    assert loaded.explicit == {"title": "Own title"} and loaded.title == "Heading"


def _bytes(document) -> bytes:
    buffer = io.BytesIO()
    document.write(buffer) if isinstance(document, pypdf.PdfWriter) else document.save(buffer)
    return buffer.getvalue()


def _zip() -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "not a document")
    return buffer.getvalue()


@pytest.mark.parametrize(("text", "encoding"), [
    ("Les réunions du comité ont lieu le mardi à dix heures, salle « Bleue ».", "cp1252"),
    ("Привет, как дела? Это тест файла.", "cp1251"), ("日本語の文書です。", "shift_jis")])
def test_a_text_file_in_a_legacy_encoding_is_read_and_the_guess_recorded(tmp_path, text, encoding):
    """Issue 69: a Latin-1 (or Windows-1251, Shift JIS) .txt was refused; it is decoded, and its metadata says how."""
    from tanglerag.ingest import read_folder

    (tmp_path / "old.txt").write_bytes(text.encode(encoding))
    (tmp_path / "notes.rst").write_text("Title\n=====\n\nA reStructuredText file is read as text.\n")
    docs = {p.id: p for p in read_folder(tmp_path)}
    assert docs["old.txt"].text == text and docs["old.txt"].metadata["encoding"] == encoding
    assert "read as text" in docs["notes.rst"].text and "encoding" not in docs["notes.rst"].metadata


def test_a_sphinx_headings_permalink_mark_is_not_part_of_its_section_name():
    from tanglerag.loaders.html import load_html

    page = ('<html><body><main><h1>Guide<a class="headerlink" href="#g">¶</a></h1><p>Intro.</p>'
            '<h2>Keyring support<a class="headerlink" href="#k">¶</a></h2><p>pip asks keyring.</p></main></body></html>')
    loaded = load_html("guide.html", page.encode())
    assert [s.section for s in loaded.segments] == [["Guide"], ["Guide", "Keyring support"]]
    assert "¶" not in loaded.text()


def test_files_no_loader_reads_are_named_in_one_warning_by_type(tmp_path, caplog):
    from tanglerag.ingest import read_folder

    for name in ("guide.md", "notes.gz", "logo.png", "icon.png", "README"):
        (tmp_path / name).write_text("# Guide\n\nSome words here." if name == "guide.md" else "x")
    with caplog.at_level("WARNING"):
        assert [p.id for p in read_folder(tmp_path)] == ["guide.md"]
    (line,) = [r.getMessage() for r in caplog.records if "no loader reads" in r.getMessage()]
    assert line == ("skipping 4 file(s) of types no loader reads: no extension: README; .gz (compressed: unpack it "
                    "first): notes.gz; .png: icon.png, logo.png")
