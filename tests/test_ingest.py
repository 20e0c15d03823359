import json
from pathlib import Path

import pytest

from tanglerag.ingest import IngestError, chunk_words, load_corpus


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
