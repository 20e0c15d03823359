"""Issue 49, case 8 (prompts): a passage's title is clipped like its text (``methods.passage_words``) wherever a
prompt shows it, so a 5 MB title costs a prompt of a few kilobytes, from a real ``ask`` process and in every method."""

import os
import subprocess

import pytest

from tanglerag.config import IndexConfig
from tanglerag.family import families
from tanglerag.index.passage_index import store_passages
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder, fake_openai_server
from tanglerag.types import Passage
from tests.hashing_cli import HASHING_CLI

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "1000"}
HUGE_TITLE = "Lighthouse " * 500_000  # 5.5 MB
BOUND = 10_000  # characters of one prompt: 100 words of title and of text per passage, and the instructions
CORPUS = [Passage(id="cape", title=HUGE_TITLE, text="Amundsen kept the lighthouse on the northern cape."),
          Passage(id="office", title="Harbour", text="The harbour office opens at nine.")]
QUESTION = "Who kept the lighthouse?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("titles") / "idx"
    store_passages(folder, CORPUS, HashEmbedder(), IndexConfig(bm25=True))
    return folder


def test_ask_sends_a_prompt_of_kilobytes_for_a_title_of_megabytes(index, tmp_path):
    prompts: list[int] = []

    def reply(body):
        prompts.append(sum(len(m["content"]) for m in body["messages"]))
        return "Amundsen [1]"

    with fake_openai_server(reply) as server:  # BM25 on the hashing CLI: the process embeds nothing
        run = subprocess.run([*HASHING_CLI, "ask", QUESTION, "--index", str(index),
                              "--method", "concat", "--set", "retrieval.mode=bm25",
                              "--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}", "--set",
                              f"cache_dir={tmp_path / 'cache'}"], env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(prompts) == 1 and prompts[0] < BOUND


METHODS = sorted({name for family in families() for name in family.method_names()} - {"diva-oracle"})  # needs gold


@pytest.mark.parametrize("method", METHODS)
def test_no_method_sends_a_title_whole(index, tmp_path, method):
    backend = CannedBackend(default="unknown")
    settings = Settings.load(overrides=["retrieval.mode=bm25", "auto.entity_signals=false",
                                        f"personal.store_dir={tmp_path / 'users'}"])
    runtime = Runtime(settings, index_dir=index, llm=LLM(backend, CallCache(None)), embedder=HashEmbedder())
    runtime.pipeline(method).ask(QUESTION)
    assert backend.requests and max(sum(len(m.content) for m in messages) for messages, _ in backend.requests) < BOUND
