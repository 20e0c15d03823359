import hashlib
import json
from pathlib import Path

import pytest

from tanglerag.ingest import IngestError, chunk_passages, chunk_words, load_corpus, passages_from_upload


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_jsonl_with_extra_fields_goes_to_metadata(tmp_path):
    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": 1, "title": "T", "text": "alpha beta", "lang": "en"},
                                           {"id": "b", "text": "gamma"}])
    out = load_corpus(corpus)
    assert [p.id for p in out] == ["1", "b"]
    assert out[0].metadata == {"lang": "en"} and out[1].title == ""


def test_malformed_line_names_file_and_line(tmp_path):
    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "ok"}, "{not json", {"id": "c", "text": "fine"}])
    with pytest.raises(IngestError, match=r"c\.jsonl:2"):
        load_corpus(corpus)
    assert [p.id for p in load_corpus(corpus, skip_bad=True)] == ["a", "c"]


def test_missing_field_and_empty_text_are_reported(tmp_path):
    with pytest.raises(IngestError, match=r":1: missing field 'text'"):
        load_corpus(_jsonl(tmp_path / "a.jsonl", [{"id": "a", "body": "x"}]))
    with pytest.raises(IngestError, match=r":1: .*empty"):
        load_corpus(_jsonl(tmp_path / "b.jsonl", [{"id": "a", "text": "  "}]))


def test_empty_corpus_and_duplicates(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(IngestError, match="holds no passages"):
        load_corpus(tmp_path / "empty.jsonl")
    with pytest.raises(IngestError, match="duplicate passage id 'a'"):
        load_corpus(_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]))
    with pytest.raises(IngestError, match="not found"):
        load_corpus(tmp_path / "missing.jsonl")


def test_folder_of_txt_and_md_is_chunked(tmp_path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text(" ".join(f"w{i}" for i in range(25)))
    (docs / "sub" / "b_note.md").write_text("short note")
    (docs / "ignored.pdf").write_text("binary")
    out = load_corpus(docs, chunk_size=10, chunk_overlap=2)
    ids = [p.id for p in out]
    assert ids == ["a.txt#0", "a.txt#1", "a.txt#2", "sub/b_note.md"]
    assert out[1].text.split()[0] == "w8" and out[1].metadata["source_id"] == "a.txt"
    assert out[-1].title == "b note"


def test_chunking_covers_every_word():
    words = [f"w{i}" for i in range(23)]
    chunks = chunk_words(" ".join(words), 10, 3)
    assert chunks[0].split()[0] == "w0" and chunks[-1].split()[-1] == "w22"
    assert all(len(c.split()) <= 10 for c in chunks)
    with pytest.raises(IngestError):
        chunk_words("x", 5, 5)


# -- document metadata (issue 50, item 1) ---------------------------------------------------------------------------
LONG = " ".join(f"w{i}" for i in range(25))


def test_jsonl_provenance_fields_reach_every_chunk(tmp_path):
    corpus = _jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "text": LONG, "date": "2024-03-01", "source": "example.org", "authority": "official",
         "meta": {"lang": "fr"}},
        {"id": "b", "text": "short", "metadata": {"date": 2023, "authority": 2.5}}])
    out = load_corpus(corpus, chunk_size=10, chunk_overlap=2)
    assert [p.id for p in out] == ["a#0", "a#1", "a#2", "b"]
    for chunk in out[:3]:
        assert chunk.metadata == {"date": "2024-03-01", "source": "example.org", "authority": "official",
                                  "meta": {"lang": "fr"}, "source_id": "a", "chunk": chunk.metadata["chunk"]}
    assert out[3].metadata == {"date": 2023, "authority": 2.5}  # a named tier and a date are kept as written


@pytest.mark.parametrize("record, message", [
    ({"date": "soon"}, r"c\.jsonl: document 'a': metadata field 'date': cannot read 'soon'"),
    ({"date": "2024-02-30"}, "metadata field 'date'"),
    ({"authority": "offical"}, r"metadata field 'authority': unknown tier 'offical' \(a number, or one of: "),
    ({"source": ["x"]}, "metadata field 'source': expected text"),
    ({"meta": "x"}, "metadata field 'meta': expected an object"),
])
def test_unreadable_provenance_is_refused_naming_the_document_and_field(tmp_path, record, message):
    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": "ok", "text": "fine"}, {"id": "a", "text": "x", **record}])
    with pytest.raises(IngestError, match=message) as caught:
        load_corpus(corpus)
    assert "\n" not in str(caught.value)


def test_tiers_in_force_decide_which_names_pass(tmp_path):
    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "x", "authority": "gov"}])
    with pytest.raises(IngestError, match="unknown tier 'gov'"):
        load_corpus(corpus)
    assert load_corpus(corpus, tiers={"gov": 4.0})[0].metadata["authority"] == "gov"


def test_markdown_front_matter_becomes_metadata_and_leaves_the_text(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "law.md").write_text("---\ntitle: Tax law\ndate: 2024-03-01\nsource: gov.example\nauthority: official\n"
                                 "meta: {lang: en, tags: [tax, law]}\n---\n# Rates\nThe rate is 20 percent.\n")
    (docs / "plain.md").write_text("No front matter here.\n---\nA rule, then more text.\n")
    (docs / "rule.txt").write_text("---\ntitle: not front matter in a .txt\n---\nbody\n")
    (docs / "only.md").write_text("---\ntitle: nothing below\n---\n")
    law, plain, rule = load_corpus(docs)  # only.md has no text: skipped like an empty file
    assert law.id == "law.md" and law.title == "Tax law" and law.text == "# Rates\nThe rate is 20 percent."
    assert law.metadata == {"date": "2024-03-01", "source": "gov.example", "authority": "official",  # YAML's date
                            "meta": {"lang": "en", "tags": ["tax", "law"]}, "path": "law.md",  # as ISO text
                            "sha256": hashlib.sha256((docs / "law.md").read_bytes()).hexdigest(), "section": ["Rates"]}
    # a line over '---' is a setext heading (CommonMark): the file's one section
    assert plain.text.startswith("No front matter") and plain.metadata["section"] == ["No front matter here."]
    assert rule.text.startswith("---\ntitle") and rule.title == "rule" and "section" not in rule.metadata


@pytest.mark.parametrize("front, message", [
    ("title: [unclosed\n", r"notes\.md: front matter is not valid YAML at line \d+"),
    ("- a list\n", r"notes\.md: front matter must be fields \(key: value\), not a list"),
    ("title: 3\n", "front matter field 'title': expected text"),
    ("blob: !!binary aGVsbG8=\n", "front matter field 'blob': a bytes is not a value metadata can hold"),
    ("date: 2024-13-01\n", r"notes\.md: document 'notes\.md': metadata field 'date'"),
])
def test_front_matter_that_cannot_be_read_is_one_line_naming_the_file(tmp_path, front, message):
    (tmp_path / "notes.md").write_text(f"---\n{front}---\nBody text.\n")
    with pytest.raises(IngestError, match=message) as caught:
        load_corpus(tmp_path / "notes.md")
    assert "\n" not in str(caught.value)


def test_uploads_read_front_matter_and_records_alike():
    (note,) = passages_from_upload("guides/notes.md", b"---\ndate: 2024-05\nsource: wiki\n---\nThe note.\n")
    assert note.id == "guides/notes.md" and note.text == "The note.\n"
    assert note.metadata == {"date": "2024-05", "source": "wiki", "path": "guides/notes.md",
                             "sha256": hashlib.sha256(b"---\ndate: 2024-05\nsource: wiki\n---\nThe note.\n").hexdigest()}
    (record,) = passages_from_upload("more.jsonl", b'{"id": "r", "text": "t", "date": "2024", "source": "s"}\n')
    assert record.metadata == {"date": "2024", "source": "s"}
    with pytest.raises(IngestError, match="no text after its front matter"):
        passages_from_upload("empty.md", b"---\nsource: wiki\n---\n")
    with pytest.raises(IngestError, match=r"upload: document 'r': metadata field 'date'"):
        chunk_passages(passages_from_upload("bad.jsonl", b'{"id": "r", "text": "t", "date": "May"}\n'), "upload")


DOCUMENTS = Path(__file__).parent / "data" / "documents"


def _word(path: Path, *blocks: tuple[int | None, str]) -> Path:
    import docx

    document = docx.Document()
    for level, text in blocks:
        document.add_paragraph(text) if level is None else document.add_heading(text, level)
    document.save(str(path))
    return path


def test_a_folder_of_documents_as_people_have_them_each_chunk_saying_where_it_stands(tmp_path):
    docs = tmp_path / "docs"
    (docs / "web").mkdir(parents=True)
    pdf = (DOCUMENTS / "reportlab-userguide-p6-11.pdf").read_bytes()
    (docs / "guide.pdf").write_bytes(pdf)
    (docs / "web" / "basics.html").write_bytes((DOCUMENTS / "The-Basics.html").read_bytes())
    _word(docs / "policy.docx", (1, "Leave"), (None, "Staff take leave."), (2, "Limits"), (None, "Five days."))
    (docs / "notes.md").write_text("# Notes\nFirst.\n## Later\nSecond.\n")
    (docs / ".hidden.md").write_text("# Hidden\nnot read\n")
    chunks = load_corpus(docs, chunk_size=120, chunk_overlap=20)
    by_doc: dict[str, list] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.metadata["path"], []).append(chunk)
    assert sorted(by_doc) == ["guide.pdf", "notes.md", "policy.docx", "web/basics.html"]
    guide = by_doc["guide.pdf"]
    assert {c.metadata["page"] for c in guide} == {1, 2, 3, 4, 5, 6} and len(guide) > 6
    assert all(c.title == "ReportLab PDF Generation User Guide" and c.metadata["date"] == "2024-10-12"
               and c.metadata["source"] == c.metadata["author"] == "the ReportLab Team"
               and c.metadata["sha256"] == hashlib.sha256(pdf).hexdigest() for c in guide)
    pages = [c.metadata["page"] for c in guide]
    assert pages == sorted(pages) and [c.id for c in guide] == [f"guide.pdf#{i}" for i in range(len(guide))]
    # sections this short make one chunk (index.min_chunk_words), standing where most of its words stand
    assert [(c.metadata["section"], c.text) for c in by_doc["policy.docx"]] == [
        (["Leave"], "Leave\nStaff take leave.\n\nLimits\nFive days.")]
    assert [c.metadata["section"] for c in by_doc["notes.md"]] == [["Notes"]]
    assert by_doc["notes.md"][0].title == "Notes"  # the first heading titles a file without front matter
    basics = by_doc["web/basics.html"][0]
    assert basics.metadata["section"] == ["2.1 The Basics"] and basics.id.startswith("web/basics.html")


def test_bad_files_are_one_warning_each_and_the_rest_is_indexed(tmp_path, caplog):
    import pypdf

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("A good note about leave.")
    locked = pypdf.PdfWriter(clone_from=pypdf.PdfReader(DOCUMENTS / "reportlab-userguide-p6-11.pdf"))
    locked.encrypt("secret", algorithm="AES-256")
    locked.write(str(docs / "locked.pdf"))
    (docs / "cut.pdf").write_bytes((DOCUMENTS / "reportlab-userguide-p6-11.pdf").read_bytes()[:3000])
    (docs / "page.pdf").write_text("<html>a page saved as .pdf</html>")
    (docs / "latin.txt").write_bytes(b"caf\xe9 au lait")  # a legacy encoding: read (issue 69), not refused
    (docs / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0 an OLE file")
    (docs / "empty.md").write_text("")
    (docs / "image.pdf").write_bytes(_blank_pdf())
    with caplog.at_level("WARNING"):
        good, latin = sorted(load_corpus(docs), key=lambda p: p.id)
    assert good.id == "good.txt" and latin.text == "café au lait" and latin.metadata["encoding"] == "cp1250"
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert all("\n" not in w for w in warnings) and len(warnings) == 6
    said = " ".join(warnings)
    for name, reason in [("locked.pdf", "encrypted PDF"), ("cut.pdf", "PDF"), ("page.pdf", "not a PDF"),
                         ("old.docx", "not a Word .docx file"), ("empty.md", "empty"),
                         ("image.pdf", "scanned or image-only")]:
        assert any(name in w and reason in w for w in warnings), (name, said)


def test_a_single_bad_file_or_upload_is_refused_in_one_line(tmp_path):
    (tmp_path / "blank.pdf").write_bytes(_blank_pdf())
    with pytest.raises(IngestError, match=r"blank.pdf: no text in its 1 page\(s\)"):
        load_corpus(tmp_path / "blank.pdf")
    with pytest.raises(IngestError, match=r"^notes.rtf: unsupported file type; upload \.docx, .*\.pdf.* or \.jsonl"):
        passages_from_upload("notes.rtf", b"{\\rtf1}")
    (doc,) = passages_from_upload("hr/guide.pdf", (DOCUMENTS / "reportlab-userguide-p6-11.pdf").read_bytes())
    assert doc.id == "hr/guide.pdf" and doc.metadata["path"] == "hr/guide.pdf"
    chunks = chunk_passages([doc], "upload")
    assert all(c.metadata["page"] in range(1, 7) for c in chunks)


def _blank_pdf() -> bytes:
    import io

    import pypdf

    writer, buffer = pypdf.PdfWriter(), io.BytesIO()
    writer.add_blank_page(612, 792)
    writer.write(buffer)
    return buffer.getvalue()
