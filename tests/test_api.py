"""The Python API (``tanglerag.api``, exported at the package's top level) on a canned LLM and the hashing embedder."""

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import tanglerag
from tanglerag import Tanglerag
from tanglerag.errors import InputError
from tanglerag.eval.records import EvalReport
from tanglerag.index.documents import DocumentConflict, UnknownDocuments
from tanglerag.index.passage_index import PassageIndex
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder, canned_llm
from tanglerag.trace import Message
from tanglerag.types import Answer, Passage

SAMPLE = Path(tanglerag.__file__).parent / "sample_data" / "sample_corpus.jsonl"
CAPITALS = [Passage(id="fr", title="France", text="Paris is the capital of France."),
            Passage(id="de", title="Germany", text="Berlin is the capital of Germany."),
            Passage(id="it", title="Italy", text="Rome is the capital of Italy.")]
RULES = [("capital of France", "Paris [1]"), ("capital of Germany", "Berlin [1]"), ("capital of Italy", "Rome [1]")]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(overrides=[f"cache_dir={tmp_path / 'cache'}", "retrieval.top_k=2"])


def _rag(tmp_path: Path, settings: Settings, **llm_options: Any) -> Tanglerag:
    llm = canned_llm(**llm_options) if llm_options else canned_llm(RULES)
    return Tanglerag(tmp_path / "index", settings, llm=llm, embedder=HashEmbedder())


def _stored(folder: Path) -> dict[str, str]:
    return {p.id: p.text for p in PassageIndex.load(folder, HashEmbedder()).passages}


def test_import_is_cheap_and_every_exported_name_resolves() -> None:
    code = ("import sys, tanglerag; assert 'torch' not in sys.modules and 'tanglerag.api' not in sys.modules; "
            "print(sorted(n for n in tanglerag.__all__ if getattr(tanglerag, n) is None))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert tanglerag.ask_many is tanglerag.api.ask_many and "evaluate" in dir(tanglerag)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = tanglerag.nothing


def test_build_add_replace_and_remove_documents(tmp_path: Path, settings: Settings) -> None:
    rag = _rag(tmp_path, settings)
    manifest = rag.build(CAPITALS[:2])
    assert (manifest.count, manifest.embedding_model) == (2, "hash-64")
    changes = rag.add([CAPITALS[2], CAPITALS[0]])
    assert (changes.added, changes.unchanged) == (1, 1)
    moved = Passage(id="de", title="Germany", text="Bonn was the capital of West Germany.")
    with pytest.raises(DocumentConflict, match="'de'"):
        rag.add([moved])
    assert rag.replace([moved]).replaced == ["de"]
    assert rag.ask("What was the capital of West Germany?").passages[0].passage.text == moved.text
    assert rag.remove(["fr", "it"]).removed == 2
    with pytest.raises(UnknownDocuments):
        rag.remove("fr")
    assert _stored(tmp_path / "index") == {"de": moved.text}
    assert rag.ask("capital of Germany?").passages[0].passage.id == "de"  # the edited index serves at once


def test_build_reads_corpus_files_and_chunks_long_passages(tmp_path: Path, settings: Settings) -> None:
    rag = _rag(tmp_path, settings.model_copy(update={"index": settings.index.model_copy(
        update={"chunk_words": 4, "chunk_overlap": 0})}))
    assert rag.build(str(SAMPLE)).count > 94  # a path given as text; 100-word passages cut into 4-word chunks
    rag.build([Passage(id="long", text="one two three four five six")])
    assert sorted(_stored(tmp_path / "index")) == ["long#0", "long#1"]


def test_without_an_index_folder_writing_is_refused(settings: Settings) -> None:
    with pytest.raises(InputError, match="no index folder"):
        Tanglerag(None, settings, llm=canned_llm(), embedder=HashEmbedder()).build(CAPITALS)


def test_ask_and_aask_answer_with_citations(tmp_path: Path, settings: Settings) -> None:
    rag = _rag(tmp_path, settings)
    rag.build(CAPITALS)
    answer = rag.ask("What is the capital of France?")
    assert isinstance(answer, Answer) and answer.text == "Paris [1]" and answer.citations == ["fr"]
    awaited = asyncio.run(rag.aask("What is the capital of France?"))
    assert (awaited.text, awaited.citations, awaited.usage.total.cached_calls) == ("Paris [1]", ["fr"], 1)


def test_cancelling_aask_stops_the_question_before_its_next_llm_call(tmp_path: Path, settings: Settings) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(messages: list[Message]) -> str:
        entered.set()
        release.wait(10)
        return "Paris"

    rag = _rag(tmp_path, settings, responder=slow)
    rag.build(CAPITALS)
    backend = rag.runtime.llm.backend
    assert isinstance(backend, CannedBackend)

    async def cancel_while_answering() -> None:
        task = asyncio.create_task(rag.aask("What is the capital of France?", method="post-fusion"))
        assert await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()

    asyncio.run(cancel_while_answering())  # returns once the worker thread has stopped
    assert len(backend.requests) == 1  # post-fusion would make one call per passage (2)


def test_ask_many_runs_on_the_evaluation_engine_in_order_with_progress(tmp_path: Path, settings: Settings) -> None:
    both_in_flight = threading.Barrier(2, timeout=10)  # broken (an error) unless two questions run at once

    def answer(messages: list[Message]) -> str:
        both_in_flight.wait()
        return "the first passage [1]"

    rag = _rag(tmp_path, settings, responder=answer, concurrency=2)
    rag.build(CAPITALS)
    questions = [*(f"What is the capital of {country}?" for country in ("Italy", "France", "Germany")),
                 "Which city is the capital of France?"]  # four prompts: a cached one would leave the barrier alone
    heard = []
    answers = rag.ask_many(questions, concurrency=2, progress=lambda done, total: heard.append((done, total)))
    assert [a.question for a in answers] == questions
    assert [a.citations for a in answers] == [["it"], ["fr"], ["de"], ["fr"]]
    assert heard == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert rag.ask_many([]) == []
    with pytest.raises(InputError, match="at least 1"):
        rag.ask_many(questions, concurrency=0)


def test_evaluate_scores_the_bundled_sample_and_writes_the_run(tmp_path: Path, settings: Settings) -> None:
    rag = Tanglerag(None, settings, llm=canned_llm(default="unknown"), embedder=HashEmbedder())
    heard = []
    report = rag.evaluate("ramdocs-sample", methods=["concat"], limit=2, out=tmp_path / "run",
                          progress=lambda done, total: heard.append((done, total)))
    assert isinstance(report, EvalReport) and report.n == 2 and [r.method for r in report.results] == ["concat"]
    assert report.results[0].metrics["unk"] == 1.0  # the canned model says "unknown" to everything
    assert heard == [(1, 2), (2, 2)]
    assert json.loads((tmp_path / "run" / "results.json").read_text())["n"] == 2
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 2
    with pytest.raises(InputError, match="unknown method"):
        rag.evaluate("ramdocs-sample", methods=["nope"], out=tmp_path / "never")
    assert not (tmp_path / "never").exists()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(InputError, match="is a file"):
        rag.evaluate("ramdocs-sample", out=tmp_path / "a-file")


def test_module_level_functions_load_the_configured_models(tmp_path: Path, settings: Settings,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tanglerag.runtime.build_llm", lambda cfg, cache_dir: canned_llm(RULES))
    monkeypatch.setattr("tanglerag.runtime.Embedder", lambda cfg: HashEmbedder())
    folder = tmp_path / "index"
    assert tanglerag.build_index(CAPITALS[:2], folder, settings=settings).count == 2
    assert tanglerag.add_documents(CAPITALS[2:], folder, settings=settings).added == 1
    moved = Passage(id="it", title="Italy", text="Turin was the capital of Italy.")
    assert tanglerag.replace_documents([moved], folder, settings=settings).replaced == ["it"]
    assert tanglerag.remove_documents("de", folder, settings=settings).removed == 1
    assert tanglerag.ask("capital of France?", folder, settings=settings).citations == ["fr"]
    assert asyncio.run(tanglerag.aask("capital of France?", folder, settings=settings)).citations == ["fr"]
    answers = tanglerag.ask_many(["capital of France?", "capital of Italy?"], folder, settings=settings)
    assert [a.citations for a in answers] == [["fr"], ["it"]]
    assert tanglerag.evaluate("ramdocs-sample", limit=1, settings=settings).n == 1


def test_ask_filters_by_document_metadata(tmp_path: Path, settings: Settings) -> None:
    rag = _rag(tmp_path, settings)
    dated = [p.model_copy(update={"metadata": {"date": date, "source": "atlas.org"}})
             for p, date in zip(CAPITALS, ["2021", "2024-05-01", "2024-06"], strict=True)]
    rag.build(dated)
    answer = rag.ask("What is the capital of France?", where="date >= 2024-01-01")
    assert {hit.passage.id for hit in answer.passages} == {"de", "it"}
    many = rag.ask_many(["What is the capital of France?"], where="date < 2022")
    assert [hit.passage.id for hit in many[0].passages] == ["fr"]
    assert len(rag.ask("What is the capital of France?").passages) == 2  # the settings' (empty) where again
    with pytest.raises(InputError, match="where 'dat >= 2024': unknown field 'dat'"):
        rag.ask("What is the capital of France?", where="dat >= 2024")
    with pytest.raises(InputError, match="does not apply to a question with a user"):
        rag.ask(tanglerag.Question(text="Capital?", user_id="alice"), where="date >= 2024")
    with pytest.raises(InputError, match=r"in memory: document 'fr': metadata field 'date'"):
        rag.add([CAPITALS[0].model_copy(update={"metadata": {"date": "yesterday"}})])
