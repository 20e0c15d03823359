"""The OpenAI-compatible backend against a real server: llama.cpp's own HTTP server (xllamacpp), in-process.

`ask` and a small `eval` go over HTTP to the embedded model, with two requests in flight at a time
(``llm.concurrency=2`` sends post-fusion's per-passage calls in parallel), then a cached re-run.
"""

import json
import socket

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.llm.model_files import resolve_gguf
from tanglerag.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]
runner = CliRunner()


@pytest.fixture(scope="module")
def server_url():
    import xllamacpp

    settings = Settings()
    with socket.socket() as probe:  # a free port for the server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = xllamacpp.CommonParams()
    params.model.path = str(resolve_gguf(settings.llm.model, settings.cache_dir))
    params.n_ctx = 4096
    params.n_parallel = 2
    params.cpuparams.n_threads = settings.llm.n_threads
    params.cpuparams_batch.n_threads = settings.llm.n_threads
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.verbosity = -1
    params.warmup = False
    server = xllamacpp.Server(params)
    yield f"http://127.0.0.1:{port}/v1"
    del server


def test_ask_and_eval_over_http_with_concurrency_and_a_cached_rerun(server_url, tmp_path):
    common = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server_url}", "--set", "llm.model=local",
              "--set", "llm.concurrency=2", "--set", f"cache_dir={tmp_path / 'cache'}"]
    indexed = runner.invoke(app, ["index", "src/tanglerag/sample_data/sample_corpus.jsonl", "--out",
                                  str(tmp_path / "idx"), *common])
    assert indexed.exit_code == 0, indexed.output
    asked = runner.invoke(app, ["ask", "What sport is Bobby Carpenter associated with?", "--index",
                                str(tmp_path / "idx"), "--top-k", "2", "--json", *common])
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert out["usage"]["llm_calls"] == 1 and out["usage"]["prompt_tokens"] > 100 and out["answer"]

    args = ["eval", "--dataset", "ramdocs-sample", "--methods", "post-fusion", "--limit", "1", "--top-k", "2",
            "--json", *common]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)["results"][0]
    assert result["usage"]["llm_calls"] == 2.0 and result["usage"]["cached_calls"] == 0.0
    again = json.loads(runner.invoke(app, args).stdout)["results"][0]
    assert again["usage"]["llm_calls"] == 0.0 and again["usage"]["cached_calls"] == 2.0
    assert again["metrics"] == result["metrics"]
