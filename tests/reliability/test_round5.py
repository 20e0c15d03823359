"""Reliability round 5 (issue 68): text that is not Unicode is one line naming where it is, on the CLI, the Python
API and the JSONL reader alike; a read-only search makes no folder; a store's refusals say why."""

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.errors import IngestError, InputError
from tanglerag.ingest import read_jsonl_passages
from tanglerag.testing import HashEmbedder

LONE = '{"id": "s1", "text": "a\\ud800b"}\n{"id": "s2", "text": "fine"}\n{"id": "s3", "text": "x", "meta": {"k": ["ok", "\\udfff"]}}\n'


def test_a_lone_surrogate_in_jsonl_names_the_file_line_and_field_and_can_be_skipped(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(LONE)
    with pytest.raises(IngestError, match=r"c.jsonl:1: field 'text' holds a lone surrogate"):
        list(read_jsonl_passages(corpus))
    kept = list(read_jsonl_passages(corpus, skip_bad=True))
    assert [p.id for p in kept] == ["s2"]  # s3's nested metadata is refused too


def test_the_index_command_refuses_a_lone_surrogate_in_one_line(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(LONE)
    result = CliRunner().invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"),
                                      "--set", "embedding.cache=false"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "c.jsonl:1: field 'text' holds a lone surrogate" in result.output
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("text", ["leave \udcff days", "a\ud800b"])
def test_a_question_that_is_not_unicode_text_is_the_callers_error(tmp_path, text):
    from tanglerag import Tanglerag

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "p", "text": "Leave is 20 days."}\n')
    rag = Tanglerag(tmp_path / "idx", embedder=HashEmbedder())
    rag.build(corpus)
    with pytest.raises(InputError, match="which is not UTF-8 text"):
        rag.search(text)
    with pytest.raises(InputError, match="invalid question: .*which is not UTF-8 text"):
        rag.ask(text)


def _search(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["search", "leave", *args, "--set", "embedding.cache=false"])
    return result.exit_code, result.output


def test_a_mistyped_store_path_on_a_read_is_refused_and_no_folder_is_made(tmp_path):
    typo = tmp_path / "qdrnt-data"
    code, out = _search("--store", "qdrant", "--store-path", str(typo), "--collection", "docs")
    assert code == 2 and out.count("\n") == 1 and f"store.path {typo} does not exist" in out
    assert not typo.exists()


def test_a_folder_given_as_a_store_url_points_to_store_path(tmp_path):
    code, out = _search("--store", "qdrant", "--store-url", str(tmp_path), "--collection", "docs")
    assert code == 2 and out.count("\n") == 1 and "is no address (http://host:port): a folder is store.path" in out


def test_a_chroma_collection_name_chroma_would_refuse_says_the_rule(tmp_path):
    pytest.importorskip("chromadb")
    (tmp_path / "ch").mkdir()
    code, out = _search("--store", "chroma", "--store-path", str(tmp_path / "ch"), "--collection", "../escapedC")
    assert code == 2 and out.count("\n") == 1 and "a name is 3 to 512 letters, digits" in out


def test_a_plain_client_that_times_out_is_let_go_like_a_stream(tmp_path):
    """post-fusion makes one call per passage (0.4 s each); a non-streaming client gives up after 0.6 s, as an SDK's
    timeout does: its question ends before its next call, its slot frees and /metrics counts it abandoned."""
    import time

    import httpx

    from tanglerag.testing import CannedBackend
    from tests.reliability.serving import served
    from tests.service.conftest import make_runtime

    calls: list[float] = []

    def slow(messages) -> str:
        calls.append(time.monotonic())
        time.sleep(0.4)
        return "Paris [1]"

    runtime = make_runtime(tmp_path, backend=CannedBackend(responder=slow))
    asks = [("/v1/ask", {"question": "capital of France?", "method": "post-fusion"}),
            ("/v1/chat/completions", {"model": "tanglerag/post-fusion",  # another question: no call of it cached
                                      "messages": [{"role": "user", "content": "the capital of France?"}]})]
    with served(runtime) as url:
        for path, body in asks:
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(f"{url}{path}", json=body, timeout=httpx.Timeout(10, read=0.6))
            deadline = time.monotonic() + 20
            while "tanglerag_questions_running 0.0" not in httpx.get(f"{url}/metrics").text:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        metrics = httpx.get(f"{url}/metrics").text
    assert "tanglerag_abandoned_questions_total 2.0" in metrics, [m for m in metrics.splitlines() if "aband" in m or "requests_total{" in m]
    assert len(calls) < 2 * 4  # each question stopped before its last calls (4: three passages and the answer)
