"""The DPR passages TSV: read as DPR's code reads it (quoted texts, doubled quotes), indexed directly, converted to
corpus JSONL that reads back to the same passages, and refused in one line naming the line when malformed."""

import json

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.dpr import convert_dpr, read_dpr_tsv
from tanglerag.errors import IngestError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.ingest import load_corpus
from tanglerag.testing import HashEmbedder

# as psgs_w100.tsv is written: texts in double quotes with inner quotes doubled, titles bare
TSV = ('id\ttext\ttitle\n'
       '1\t"Aaron Aaron ( or ; ""Ahärôn"") is the oldest son of Amram and Jochebed."\tAaron\n'
       '2\t"his older sister Miriam was among the Levites; a tab\there stays in the text"\tAaron\n'
       '3\tBerlin is the capital of Germany.\t"Berlin, Germany"\n')
EXPECTED = [("1", "Aaron", 'Aaron Aaron ( or ; "Ahärôn") is the oldest son of Amram and Jochebed.'),
            ("2", "Aaron", "his older sister Miriam was among the Levites; a tab\there stays in the text"),
            ("3", "Berlin, Germany", "Berlin is the capital of Germany.")]


@pytest.fixture
def tsv(tmp_path):
    path = tmp_path / "psgs_w100.tsv"
    path.write_text(TSV, encoding="utf-8")
    return path


def test_passages_are_read_with_dpr_quoting(tsv):
    assert [(p.id, p.title, p.text) for p in read_dpr_tsv(tsv)] == EXPECTED
    # the corpus reader takes the .tsv like any corpus: chunked, checked, ids unique
    assert [(p.id, p.title, p.text) for p in load_corpus(tsv)] == EXPECTED


def test_conversion_writes_corpus_jsonl_that_reads_back_the_same(tsv, tmp_path):
    out = tmp_path / "wiki.jsonl"
    seen = []
    assert convert_dpr(tsv, out, progress=seen.append, every=2) == 3
    assert seen == [2, 1]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {"id": "1", "title": "Aaron", "text": EXPECTED[0][2]}
    assert [(p.id, p.title, p.text) for p in load_corpus(out)] == EXPECTED
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([tsv.name, out.name])  # no temporary file left


@pytest.mark.parametrize(("text", "message"), [
    ("id\ttitle\ttext\n1\tx\ty\n", r"psgs\.tsv:1: not a DPR passages file"),
    ("", r"psgs\.tsv:1: not a DPR passages file.*an empty file"),
    ("id\ttext\ttitle\n1\tfine\tA\n2\tno title field\n", r"psgs\.tsv:3: expected id, text and title .* got 2 field"),
    ("id\ttext\ttitle\n1\tfine\tA\n\t\"text\"\tB\n", r"psgs\.tsv:3: empty id"),
    ("id\ttext\ttitle\n1\t  \tA\n", r"psgs\.tsv:2: empty text"),
])
def test_a_malformed_file_is_refused_naming_the_line(tmp_path, text, message):
    path = tmp_path / "psgs.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(IngestError, match=message):
        list(read_dpr_tsv(path))
    out = tmp_path / "out.jsonl"
    with pytest.raises(IngestError, match=message):
        convert_dpr(path, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["psgs.tsv"]  # nothing half-written


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b"id\ttext\ttitle\n1\tok\tA\n2\t\xff\xfe bad\tB\n")
    with pytest.raises(IngestError, match=r"psgs\.tsv:\d+: not UTF-8"):
        list(read_dpr_tsv(path))


def test_cli_indexes_the_tsv_directly_and_converts_it(tsv, tmp_path, monkeypatch):
    monkeypatch.setattr("tanglerag.runtime.Embedder", lambda cfg: HashEmbedder())
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(tsv), "--out", str(tmp_path / "idx"), "--bm25",
                                 "--set", f"cache_dir={tmp_path / 'cache'}", "--set", "embedding.cache=false"])
    assert result.exit_code == 0, result.output
    index = PassageIndex.load(tmp_path / "idx", HashEmbedder())
    assert index.search("capital of Germany", 1, mode="bm25")[0].passage.id == "3"
    assert len(index.passages) == 3

    result = runner.invoke(app, ["convert", "dpr", str(tsv), "--out", str(tmp_path / "wiki.jsonl")])
    assert result.exit_code == 0 and "wrote 3 passages" in result.output
    result = runner.invoke(app, ["convert", "dpr", str(tmp_path / "missing.tsv"), "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "DPR passages file not found" in result.output
