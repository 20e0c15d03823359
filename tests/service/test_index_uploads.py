"""Issue 51 over HTTP: uploaded PDFs, web pages and Word files are indexed with their pages and sections (shown in
/v1/ask's passages), and a file that cannot be read is a 400 in one line naming it, with the index left as it was."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pypdf

DOCUMENTS = Path(__file__).parents[1] / "data" / "documents"
PDF = (DOCUMENTS / "reportlab-userguide-p6-11.pdf").read_bytes()


def _word() -> bytes:
    document, buffer = docx.Document(), io.BytesIO()
    document.add_heading("Leave", 1)
    document.add_paragraph("Staff take five days of leave under the ReportLab policy.")
    document.save(buffer)
    return buffer.getvalue()


def test_uploaded_documents_keep_their_pages_and_sections(client):
    before = client.get("/v1/index").json()["manifest"]["count"]
    r = client.post("/v1/index/documents", files=[
        ("files", ("manuals/guide.pdf", PDF, "application/pdf")),
        ("files", ("web/basics.html", (DOCUMENTS / "The-Basics.html").read_bytes(), "text/html")),
        ("files", ("hr/policy.docx", _word(), "application/octet-stream"))])
    assert r.status_code == 200, r.text
    assert r.json()["total"] > before + 6
    passages = client.post("/v1/ask", json={"question": "What is the ReportLab PDF library?", "top_k": 20}
                           ).json()["passages"]
    pages = [p for p in passages if p["id"].startswith("manuals/guide.pdf")]
    assert pages and all(p["location"].startswith((f"guide.pdf p. {p['page']}", f"guide.pdf pp. {p['page']}-"))
                         for p in pages)  # pp. 1-2: a chunk that ends a sentence page 2 begins
    assert {p["id"]: p.get("location") for p in passages}.get("hr/policy.docx", "policy.docx §Leave") == (
        "policy.docx §Leave")


def test_an_unreadable_upload_is_one_line_naming_it_and_nothing_is_stored(client):
    before = client.get("/v1/index").json()["manifest"]
    locked, buffer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(PDF))), io.BytesIO()
    locked.encrypt("secret", algorithm="AES-128")
    locked.write(buffer)
    for name, data, reason in [("locked.pdf", buffer.getvalue(), "encrypted PDF"),
                               ("scan.docx", b"%PDF-1.4 not a word file", "not a Word .docx file"),
                               ("notes.odt", b"PK\x03\x04", "unsupported file type")]:
        r = client.post("/v1/index/documents", files=[("files", ("ok.txt", b"fine text", "text/plain")),
                                                      ("files", (name, data, "application/octet-stream"))])
        assert r.status_code == 400 and r.json()["error"].startswith(f"{name}: {reason}"), r.text
        assert "\n" not in r.json()["error"]
    assert client.get("/v1/index").json()["manifest"] == before
