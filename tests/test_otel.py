"""Each answer's trace as OpenTelemetry spans: the question, its stages, their LLM calls, with the GenAI and
OpenInference attributes; checked with the SDK's in-memory exporter and with a real OTLP/HTTP receiver on loopback,
from ask, eval and serve; nothing of OpenTelemetry loaded when export is off."""

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tanglerag.config import OtelConfig
from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.runner import EvalRunner
from tanglerag.index.passage_index import store_passages
from tanglerag.otel import Answered, SpanExport, span_export
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder, canned_llm
from tanglerag.types import Passage, Question

CORPUS = [Passage(id="p1", title="Paris", text="Paris is the capital of France."),
          Passage(id="p2", title="Berlin", text="Berlin is the capital of Germany.")]


def _answer(tmp_path, method="post-fusion"):
    settings = Settings.load(overrides=[f"cache_dir={tmp_path}", "retrieval.top_k=2"])
    store_passages(tmp_path / "idx", CORPUS, HashEmbedder(), settings.index)
    runtime = Runtime(settings, index_dir=tmp_path / "idx", llm=canned_llm([("France", "Paris")]),
                      embedder=HashEmbedder())
    return runtime.pipeline(method).ask(Question(text="What is the capital of France?"))


def _spans(answer, prompts=False):
    memory = InMemorySpanExporter()
    SpanExport(OtelConfig(enabled=True, prompts=prompts), exporter=memory).export(Answered.of(answer, "q1"),
                                                                                  "canned-v1")
    return {span.name: span for span in memory.get_finished_spans()}, memory.get_finished_spans()


def test_an_answer_is_a_question_span_with_its_stages_and_their_calls(tmp_path):
    answer = _answer(tmp_path)
    named, spans = _spans(answer)
    root, retrieve, fusion = named["tanglerag post-fusion"], named["retrieve"], named["post_fusion"]
    calls = [s for s in spans if s.name == "chat canned-v1"]
    assert len(calls) == 2 and all(c.parent.span_id == fusion.context.span_id for c in calls)
    assert retrieve.parent.span_id == root.context.span_id and fusion.parent.span_id == root.context.span_id
    assert root.attributes["openinference.span.kind"] == "CHAIN" and root.attributes["tanglerag.question_id"] == "q1"
    assert retrieve.attributes["openinference.span.kind"] == "RETRIEVER"
    assert retrieve.attributes["retrieval.documents.0.document.id"] in {"p1", "p2"}
    call = calls[0].attributes
    assert call["openinference.span.kind"] == "LLM" and call["gen_ai.request.model"] == "canned-v1"
    assert call["gen_ai.usage.input_tokens"] == call["llm.token_count.prompt"] > 0 and call["gen_ai.operation.name"]
    assert root.attributes["llm.token_count.prompt"] == sum(c.attributes["llm.token_count.prompt"] for c in calls)
    assert root.start_time <= retrieve.start_time <= retrieve.end_time <= fusion.start_time <= root.end_time
    assert all(fusion.start_time <= c.start_time <= c.end_time <= fusion.end_time for c in calls)
    assert [e.name for e in root.events] == [step.kind for step in answer.trace.steps]
    # nothing a user wrote or a model read or said, unless asked for
    texts = [v for s in spans for v in s.attributes.values() if isinstance(v, str)]
    assert not any("capital" in t for t in texts)


def test_prompts_and_texts_by_setting(tmp_path):
    named, spans = _spans(_answer(tmp_path), prompts=True)
    root = named["tanglerag post-fusion"]
    assert root.attributes["input.value"] == "What is the capital of France?" and root.attributes["output.value"]
    call = next(s for s in spans if s.name == "chat canned-v1").attributes
    assert call["llm.input_messages.0.message.role"] == "system" and call["llm.output_messages.0.message.content"]
    assert "capital" in named["retrieve"].attributes["retrieval.documents.0.document.content"]


class _Receiver(BaseHTTPRequestHandler):
    got: list[ExportTraceServiceRequest] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        _Receiver.got.append(request)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.got = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    yield _Receiver.got
    server.shutdown()


def _names(requests):
    return [span.name for r in requests for rs in r.resource_spans for ss in rs.scope_spans for span in ss.spans]


def test_spans_reach_an_otlp_receiver_on_loopback(tmp_path, receiver):
    spans = span_export(OtelConfig(enabled=True, service_name="rag-test"))
    assert spans is not None
    spans.export(Answered.of(_answer(tmp_path)), "canned-v1")
    spans.close()
    assert sorted(set(_names(receiver))) == ["chat canned-v1", "post_fusion", "retrieve", "tanglerag post-fusion"]
    resource = receiver[0].resource_spans[0].resource.attributes
    assert any(a.key == "service.name" and a.value.string_value == "rag-test" for a in resource)


def test_eval_sends_each_new_answer(tmp_path, monkeypatch):
    memory = InMemorySpanExporter()
    monkeypatch.setattr("tanglerag.eval.runner.span_export",
                        lambda config: SpanExport(config, exporter=memory) if config.enabled else None)
    settings = Settings.load(overrides=["retrieval.top_k=2", "otel.enabled=true", f"cache_dir={tmp_path}"])
    _, examples = load_dataset("ramdocs-sample", limit=2)
    runner = EvalRunner(Runtime(settings, llm=canned_llm(default="unknown"), embedder=HashEmbedder()))
    runner.run("ramdocs-sample", examples, ["concat"], out=tmp_path / "run")
    roots = [s for s in memory.get_finished_spans() if s.name == "tanglerag concat"]
    assert sorted(s.attributes["tanglerag.question_id"] for s in roots) == sorted(ex.id for ex in examples)
    memory.clear()
    runner.run("ramdocs-sample", examples, ["concat"], out=tmp_path / "run")  # resumed: nothing new to send
    assert memory.get_finished_spans() == ()


def test_the_service_sends_each_answer(tmp_path):
    from tests.service.conftest import client_for, make_runtime

    memory = InMemorySpanExporter()
    runtime = make_runtime(tmp_path, backend=CannedBackend([("capital of France", "Paris [1]")]))
    with client_for(runtime) as http:
        http.app.state.tanglerag.spans = SpanExport(OtelConfig(enabled=True), exporter=memory)
        assert http.post("/v1/ask", json={"question": "What is the capital of France?"}).status_code == 200
        http.post("/v1/chat/completions", json={"model": "tanglerag/concat", "messages": [
            {"role": "user", "content": "What is the capital of France?"}]})
    names = [s.name for s in memory.get_finished_spans()]
    assert names.count("tanglerag vetted") == 1 and names.count("tanglerag concat") == 1  # /v1/ask's default, chat's


def test_nothing_of_opentelemetry_is_loaded_when_export_is_off():  # (FastAPI itself imports its API when present)
    code = ("import sys, tanglerag.otel, tanglerag.eval.runner, tanglerag.service.app, tanglerag.cli; "
            "from tanglerag.settings import Settings; from tanglerag.otel import span_export; "
            "assert span_export(Settings.load().otel) is None; "
            "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ask_sends_its_answer_before_it_exits(tmp_path, receiver, monkeypatch):
    from typer.testing import CliRunner

    from tanglerag.cli import app

    store_passages(tmp_path / "idx", CORPUS, HashEmbedder(), Settings().index)

    class _Runtime(Runtime):  # the real runtime on the canned model
        def __init__(self, settings, index_dir=None):
            super().__init__(settings, index_dir=index_dir, llm=canned_llm([("France", "Paris [1]")]),
                             embedder=HashEmbedder())

    monkeypatch.setattr("tanglerag.cli.ask.Runtime", _Runtime)
    result = CliRunner().invoke(app, ["ask", "What is the capital of France?", "--index", str(tmp_path / "idx"),
                                      "--set", f"cache_dir={tmp_path}", "--set", "otel.enabled=true"])
    assert result.exit_code == 0, result.output
    assert sorted(set(_names(receiver))) == ["answer", "chat canned-v1", "retrieve", "tanglerag vetted"]  # the default
