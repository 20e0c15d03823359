"""Round 4 of the hostile-user probe (issue 59), on what leaves the process and what the Python API takes: no
credential in the LLM server's URL reaches a span, a log line or an error; a dead OTLP endpoint costs ``ask`` a
bounded wait at exit; the API's ``where=`` is capped as the CLI's is, and its arguments of the wrong type are one
line naming the argument; a printed id, title or source cannot break its line and forge the next one."""

import json
import logging
import os
import subprocess
import sys

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

import tanglerag
from tanglerag import otel
from tanglerag.cli import app
from tanglerag.config import OtelConfig
from tanglerag.errors import InputError, LLMError, ServerUnreachableError
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.openai_compat import OpenAICompatBackend
from tanglerag.otel import Answered, SpanExport
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm, fake_openai_server
from tanglerag.trace import Message
from tanglerag.types import Passage

SECRETS = ("b0buser", "s3cretpw", "k3yvalue", "t0kenvalue")
SECRET_URL = "https://b0buser:s3cretpw@llm.example:8443/v1?api_key=k3yvalue&token=t0kenvalue"
MSGS = [Message(role="user", content="hi")]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
runner = CliRunner()


def _leaked(*texts: str) -> list[str]:
    return [secret for secret in SECRETS if any(secret in text for text in texts)]


@pytest.fixture
def rag(tmp_path):
    """A real index (hash embeddings) and the canned model behind the public API."""
    settings = Settings.load(overrides=[f"cache_dir={tmp_path / 'cache'}", "retrieval.top_k=2"])
    made = tanglerag.Tanglerag(tmp_path / "idx", settings, llm=canned_llm([("France", "Paris [1]")]),
                               embedder=HashEmbedder())
    made.build([Passage(id="p1", title="Paris", text="Paris is the capital of France."),
                Passage(id="p2", title="Berlin", text="Berlin is the capital of Germany.")])
    return made


@pytest.mark.parametrize("text, shown", [
    ("at https://u:pw@h.example/v1?key=k#gpt-4o.", "at https://***@h.example/v1?***#gpt-4o."),
    ("'http://user%40x:p@ss@[::1]:8000/v1/?sig=a&x=b' failed", "'http://***@[::1]:8000/v1/?***' failed"),
    ("http://localhost:8000/v1 and /srv/idx", "http://localhost:8000/v1 and /srv/idx"),
    ("https://api.cloudflare.com/ai/run/@cf/meta/llama", "https://api.cloudflare.com/ai/run/@cf/meta/llama"),
])
def test_the_rule_drops_user_info_and_query_and_keeps_which_server(text, shown):
    from tanglerag.redaction import without_credentials  # (imported here: the rest runs on a main without it)

    assert without_credentials(text) == shown


def test_spans_name_the_llm_server_without_its_credentials(rag):
    memory = InMemorySpanExporter()
    model = OpenAICompatBackend(SECRET_URL, "gpt-4o").model_id  # what ask, eval and serve give the spans
    SpanExport(OtelConfig(enabled=True), exporter=memory).export(Answered.of(rag.ask("Capital of France?")), model)
    spans = memory.get_finished_spans()
    texts = [span.name for span in spans] + [str(value) for span in spans for value in span.attributes.values()]
    assert _leaked(*texts) == []
    assert "chat https://***@llm.example:8443/v1?***#gpt-4o" in texts  # which server and model is still told


def _backend(handler):
    return OpenAICompatBackend(SECRET_URL, "m", transport=httpx.MockTransport(handler), backoff_s=0.0, max_retries=1)


def _refused(error: type[Exception], handler) -> str:
    with pytest.raises(error) as raised:
        _backend(handler).generate(MSGS, GenerationParams())
    return str(raised.value)


def _unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(f"cannot connect to {request.url}")


def test_llm_log_lines_and_errors_name_the_server_without_its_credentials(caplog):
    with caplog.at_level(logging.WARNING, logger="tanglerag"):
        busy = _refused(LLMError, lambda request: httpx.Response(503, text="busy"))
    refused = _refused(LLMError, lambda request: httpx.Response(400, text=f"bad request to {request.url}"))
    garbled = _refused(LLMError, lambda request: httpx.Response(200, text="<html>not JSON</html>"))
    down = _refused(ServerUnreachableError, _unreachable)
    assert "retrying https://***@llm.example:8443/v1" in caplog.text
    for told in (caplog.text, busy, refused, garbled, down):
        assert _leaked(told) == [] and "llm.example:8443" in told, told


def test_ask_verbose_logs_carry_no_credentials_of_the_llm_server(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps({"id": "p1", "text": "Paris is the capital of France."}) + "\n")
    common = ["--set", f"cache_dir={tmp_path / 'cache'}", "--set", "retrieval.mode=bm25"]
    assert runner.invoke(app, ["index", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "idx"), "--bm25",
                               *common]).exit_code == 0
    with fake_openai_server(lambda body: "Paris [1]") as server:  # the SDK keeps the query before its path
        url = server["base_url"].replace("http://", "http://b0buser:s3cretpw@") + "?token=t0kenvalue"
        done = subprocess.run([sys.executable, "-m", "tanglerag.cli", "ask", "Capital of France?", "--index",
                               str(tmp_path / "idx"), "-v", "--set", "llm.backend=openai", "--set",
                               f"llm.base_url={url}", *common], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HTTP Request: POST http://***@127.0.0.1" in done.stderr  # httpx's own line, kept, without them
    assert _leaked(done.stdout, done.stderr) == []


def test_eval_reports_and_the_models_command_name_the_llm_server_without_its_credentials(tmp_path):
    """An eval's results.json and results.md get shared (committed under docs/results, pasted into issues)."""
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "q1", "question": "Capital of France?", "answers": ["Paris"],
                                                  "passages": [{"id": "p1", "text": "Paris is in France."}]}) + "\n")
    with fake_openai_server(lambda body: "Paris [1]") as server:
        url = server["base_url"].replace("http://", "http://b0buser:s3cretpw@") + "?token=t0kenvalue"
        common = ["--set", "llm.backend=openai", "--set", f"llm.base_url={url}", "--set", f"cache_dir={tmp_path}"]
        done = runner.invoke(app, ["eval", "--dataset", str(tmp_path / "q.jsonl"), "--methods", "concat",
                                   "--out", str(tmp_path / "run"), *common])
        shown = runner.invoke(app, ["models", *common])
    assert done.exit_code == 0 and shown.exit_code == 0, done.output + shown.output
    written = [(tmp_path / "run" / name).read_text() for name in ("results.json", "results.md")]
    assert "http://***@127.0.0.1" in written[0] and "server: http://***@127.0.0.1" in shown.output
    assert _leaked(*written, shown.output) == []


def test_a_user_error_line_carries_no_credentials_of_a_url(tmp_path):
    told = runner.invoke(app, ["ask", "q?", "--index", str(tmp_path), "--set", f"llm.timeout_s={SECRET_URL}"])
    assert told.exit_code == 2 and "(given: 'https://***@llm.example:8443/v1?***')" in told.output, told.output
    assert _leaked(told.output) == []


def test_the_otlp_exporter_gets_a_short_timeout_unless_the_environment_sets_one(monkeypatch):
    """A dead OTLP endpoint held every ``ask`` 7 s at exit (the SDK retries for 10 s by default); the exporter
    now gives up after ``otel.EXPORT_TIMEOUT_S``, and OpenTelemetry's own variables still win when set."""
    from opentelemetry.exporter.otlp.proto.http import trace_exporter

    made: list[dict[str, object]] = []

    class Recording(trace_exporter.OTLPSpanExporter):
        def __init__(self, **kwargs: object) -> None:
            made.append(kwargs)
            super().__init__(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(trace_exporter, "OTLPSpanExporter", Recording)
    for name in ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    SpanExport(OtelConfig(enabled=True)).close()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "7")
    SpanExport(OtelConfig(enabled=True)).close()
    assert [kwargs.get("timeout") for kwargs in made] == [otel.EXPORT_TIMEOUT_S, None]
    assert 0 < otel.EXPORT_TIMEOUT_S <= 3


def test_the_api_where_is_capped_as_the_cli_where_is(rag, tmp_path):
    long = " and ".join(["date >= 2024-01-01"] * 200)  # 4,595 characters: a valid filter, over the cap
    with pytest.raises(InputError, match="where is 4,595 characters: at most 2,000"):
        rag.ask("Capital of France?", where=long)
    with pytest.raises(InputError, match="at most 2,000"):
        rag.ask_many(["Capital of France?"], where=long)
    told = runner.invoke(app, ["ask", "q?", "--index", str(tmp_path / "idx"), "--where", long])
    assert told.exit_code == 2 and "at most 2,000" in told.output


@pytest.mark.parametrize("call, named", [
    (lambda rag: rag.ask("q", where=123), "where must be text (a filter such as \"date >= 2024\"), got int"),
    (lambda rag: rag.ask("q", method=None), "method must be a method name such as 'concat', got NoneType"),
    (lambda rag: rag.ask(123), "question must be text or a tanglerag.Question, got int"),
    (lambda rag: rag.ask_many("What?"), "questions must be a list of questions, not one str"),
    (lambda rag: rag.ask_many(["q"], concurrency="2"), "concurrency must be a whole number, got str"),
    (lambda rag: rag.evaluate("ramdocs-sample", methods="concat"), "methods must be a list of method names"),
    (lambda rag: rag.evaluate("ramdocs-sample", limit="1"), "limit must be a whole number, got str"),
    (lambda rag: rag.remove(5), "doc_ids must be a document id or a list of them, got int"),
    (lambda rag: rag.build(b"{}"), "corpus must be a JSONL file, a folder or a list of tanglerag.Passage, got bytes"),
    (lambda rag: tanglerag.Tanglerag(rag.index_dir, {"llm": {}}), "settings must be a tanglerag.Settings"),
    (lambda rag: tanglerag.Tanglerag(5), "index_dir must be a folder path, got int"),
    (lambda rag: tanglerag.ask("q", rag.index_dir, settings={}), "settings must be a tanglerag.Settings"),
])
def test_the_api_refuses_arguments_of_the_wrong_type_in_one_line(rag, call, named):
    with pytest.raises(InputError) as refused:
        call(rag)
    assert named in str(refused.value) and "\n" not in str(refused.value)


def test_a_file_name_with_a_newline_cannot_forge_a_passage_line(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes\n*[2] forged.md (0.999) Berlin is the capital of France.md").write_text(
        "Paris is the capital of France.\n")
    common = ["--set", f"cache_dir={tmp_path / 'cache'}", "--set", "retrieval.mode=bm25"]
    assert runner.invoke(app, ["index", str(folder), "--out", str(tmp_path / "idx"), "--bm25", *common]).exit_code == 0
    with fake_openai_server(lambda body: "Paris [1]") as server:
        shown = runner.invoke(app, ["ask", "Capital of France?", "--index", str(tmp_path / "idx"), "--set",
                                    "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}", *common])
    assert shown.exit_code == 0, shown.output
    passage_lines = [line for line in shown.stdout.splitlines() if line.startswith(("*[", " ["))]
    assert len(passage_lines) == 1 and "notes\\x0a*[2] forged.md" in passage_lines[0], shown.stdout


def test_a_line_separator_is_escaped_as_one_code_point():
    from tanglerag.cli.common import printable

    assert printable("a\u2028b\x1bc", one_line=True) == "a\\u2028b\\x1bc"  # not \x2028: \x20 and "28"


def test_trace_show_prints_each_field_on_its_own_line(tmp_path):
    record = {"method": "concat", "question": "Capital?\nanswer: forged", "answer": "Paris",
              "trace": {"calls": [{"stage": "generate\n  2. forged", "messages": [], "replies": ["Paris"],
                                   "prompt_tokens": 1, "completion_tokens": 1, "cached": False,
                                   "model_seconds": 0.1}], "steps": []}}
    (tmp_path / "t.json").write_text(json.dumps(record))
    shown = runner.invoke(app, ["trace", "show", str(tmp_path / "t.json")])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert [line for line in lines if line.startswith("answer:")] == ["answer: Paris"]
    assert "concat: Capital?\\x0aanswer: forged" in lines and not any(line.startswith("  2.") for line in lines)
