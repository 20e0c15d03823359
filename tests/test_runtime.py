"""The runtime assembles components once, lazily, and wires every method and retriever the same way."""

import pytest

from tanglerag.errors import ConfigError, IndexStoreError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.methods.pcas.retriever import PersonalRetriever
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import IndexRetriever
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Question
from tanglerag.users import PersonalContextStep


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts, *, show_progress=False):
        self.embedded += texts
        return super().embed(texts)


@pytest.fixture
def index_dir(tmp_path, passages):
    folder = tmp_path / "idx"
    PassageIndex.build(passages, HashEmbedder(), Settings().index).save(folder)
    return folder


def _runtime(tmp_path, index_dir, llm_factory, backend, embedder=None):
    settings = Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "retrieval.top_k=2"])
    return Runtime(settings, index_dir=index_dir, llm=llm_factory(backend), embedder=embedder or HashEmbedder())


def test_construction_is_cheap_and_components_are_shared(tmp_path, index_dir, llm_factory):
    backend = CannedBackend(default="Madrid [1]")
    warmed = []
    backend.warm_up = lambda: warmed.append(True)
    runtime = _runtime(tmp_path, index_dir, llm_factory, backend)
    assert "index" not in vars(runtime)  # nothing loaded yet
    method = runtime.method("corg")
    assert method.resources.index is runtime.index and method.resources.llm is runtime.llm
    assert isinstance(method.resources.retriever, IndexRetriever)
    assert runtime.method("concat").resources.index is method.resources.index  # loaded once
    runtime.warm_up()
    assert warmed == [True]


def test_pipeline_answers_with_one_usage_record_and_trace(tmp_path, index_dir, llm_factory):
    runtime = _runtime(tmp_path, index_dir, llm_factory, CannedBackend(default="Madrid [1]"))
    answer = runtime.pipeline("concat").ask("What is the capital of Spain?")
    assert answer.passages[0].passage.id == "p3" and len(answer.passages) == 2
    assert set(answer.usage.stages) == {"retrieve", "generate"} and len(answer.trace.calls) == 1


def test_personal_pipeline_runs_pcas_without_re_embedding_indexed_passages(tmp_path, index_dir, llm_factory):
    embedder = CountingEmbedder()
    backend = CannedBackend(default="Vienna [1]")
    runtime = _runtime(tmp_path, index_dir, llm_factory, backend, embedder)
    runtime.context_store.add("ana", ["I live on the river Danube.", "I like opera."])
    pipeline = runtime.pipeline("concat", personal=True)
    assert isinstance(pipeline.retriever, PersonalRetriever)
    embedder.embedded.clear()
    answer = pipeline.ask(Question(text="Which capital should I visit?", user_id="ana"))
    assert embedder.embedded == ["Which capital should I visit?"]  # the question only: passages come from the index
    step = answer.trace.find(PersonalContextStep)
    assert step.user == "ana" and step.text == "I live on the river Danube."
    assert answer.passages[0].passage.id == "p5"  # Vienna, on the Danube, moves up with the user's context
    assert "About the user: I live on the river Danube." in backend.requests[0][0][-1].content


def test_answering_needs_an_index(tmp_path, llm_factory):
    runtime = Runtime(Settings(), llm=llm_factory(CannedBackend()), embedder=HashEmbedder())
    with pytest.raises(IndexStoreError, match="needs an index"):
        runtime.pipeline("concat")


@pytest.mark.parametrize(("override", "refused"), [
    ("llm.structured_stages.organise=on", "organise: neither a stage nor a method"),
    ("llm.structured_stages.corgg.generate=on", "corgg: no method has this name"),
    ("llm.structured_stages.corg.generat=on", "corg.generat: no stage has this name")])
def test_a_structured_mode_keyed_by_an_unknown_stage_or_method_is_refused_not_ignored(override, refused):
    with pytest.raises(ConfigError, match=refused):
        Runtime(Settings.load(overrides=[override]))
    mixed = ["llm.structured_stages.judge=on", "llm.structured_stages.madam-rag=repair",
             "llm.structured_stages.corg.organize=on"]
    assert Runtime(Settings.load(overrides=mixed)).settings.llm.structured_stages["corg"] == {"organize": "on"}
