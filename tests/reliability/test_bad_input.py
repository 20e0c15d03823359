"""Values of the wrong type are clear file:line errors, never data."""

import json

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.datasets.registry import load_dataset
from tanglerag.errors import DatasetError, IngestError
from tanglerag.ingest import load_corpus
from tanglerag.testing import fake_openai_server
from tanglerag.text import clip_words

QA = {"question": "Who?", "answers": ["Ada"], "passages": [{"id": "p", "text": "Ada wrote it."}]}


@pytest.mark.parametrize("change, message", [
    ({"answers": []}, "'answers' must be a non-empty list"),
    ({"answers": [None]}, "'answers' must be a non-empty list of non-empty strings"),
    ({"answers": 5}, "'answers' must be a non-empty list"),
    ({"passages": "abc"}, "'passages' must be a list"),
    ({"passages": [{"id": "p", "text": None}]}, "non-empty 'text' string"),
    ({"passages": [{"id": None, "text": "x"}]}, "an 'id' must be a non-empty string or an integer"),
    ({"question": 7}, "'question' must be a non-empty string"),
])
def test_qa_records_of_the_wrong_type(tmp_path, change, message):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(QA) + "\n" + json.dumps(QA | change) + "\n")
    with pytest.raises(DatasetError, match=rf"qa.jsonl:2: .*{message}"):
        load_dataset(str(path), fmt="qa")


def test_non_utf8_dataset_names_the_line(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_bytes(json.dumps(QA).encode() + b"\n" + b'{"question": "caf\xe9?", "answers": ["x"]}\n')
    with pytest.raises(DatasetError, match=r"qa.jsonl:2: not UTF-8"):
        load_dataset(str(path), fmt="qa")


@pytest.mark.parametrize("record, message", [
    ({"id": None, "text": "x"}, "'id' must be a non-empty string or an integer"),
    ({"id": "a", "text": None}, "'text' must be a string"),
    ({"id": "a", "text": "x", "metadata": "x"}, "'metadata' must be an object"),
    ({"id": "a", "text": "x", "title": ["t"]}, "'title' must be a string"),
])
def test_corpus_records_of_the_wrong_type(tmp_path, record, message):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "ok", "text": "fine"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(IngestError, match=rf"corpus.jsonl:2: {message}"):
        load_corpus(path)
    assert [p.id for p in load_corpus(path, skip_bad=True)] == ["ok"]  # skipped, and counted in the log


def test_corpus_encoding_and_binary_files(tmp_path, caplog):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(IngestError, match="corpus.jsonl:1: not UTF-8"):
        load_corpus(path)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("A real note.")
    (folder / "image.md").write_bytes(b"\x89PNG\r\n\x00\x00binary")
    assert [p.id for p in load_corpus(folder)] == ["note.txt"]
    assert "looks binary" in caplog.text


def test_numeric_cli_options_have_ranges(tmp_path):
    from typer.testing import CliRunner

    from tanglerag.cli import app

    runner = CliRunner()
    for option in (["--contexts", "0"], ["--batch", "0"], ["--judge-above", "1.5"], ["--limit", "0"]):
        result = runner.invoke(app, ["pcas", "build", "--source", "x.jsonl", "--out", str(tmp_path), *option])
        assert result.exit_code == 2 and "Invalid value" in result.output, option
    sampled = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--sample", "0"])
    assert sampled.exit_code == 2 and "sample size must be at least 1" in sampled.output


def test_clip_bounds_words_and_characters():
    assert clip_words("a b  c d", 2) == "a b" and clip_words("a b", None) == "a b"
    assert len(clip_words("x" * 5_000_000, 100)) == 3000  # one giant 'word' is not sent whole


def test_dangling_citation_numbers_are_removed():
    from tanglerag.text import drop_dangling_citations

    assert drop_dangling_citations("Rome [1, 9] and Paris [7]", 5) == "Rome [1] and Paris"
    assert drop_dangling_citations("Rome [2][3]", 3) == "Rome [2][3]"


def test_plain_ask_prints_markup_in_passages_literally(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "m", "text": "Paris is the capital [/bold] of France [link=x]."}) + "\n")
    common = ["--set", f"cache_dir={tmp_path}"]
    CliRunner().invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), *common])
    with fake_openai_server(lambda body: "Paris [/bold] [1]") as server:
        result = CliRunner().invoke(app, ["ask", "capital of France?", "--index", str(tmp_path / "idx"), "--set",
                                     "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}", *common])
    assert result.exit_code == 0, result.output
    assert "Paris [/bold] [1]" in result.output and "capital [/bold] of France [link=x]" in result.output
