"""examples/ runs as a user would run it, with a canned LLM and the hashing embedder in place of the models."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tanglerag.index.documents import document_id
from tanglerag.testing import HashEmbedder, canned_llm
from tanglerag.types import Answer

EXAMPLES = Path(__file__).parents[1] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_indexes_asks_and_removes_the_misleading_document(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    quickstart = _load("quickstart")
    llm = canned_llm([("Did Beethoven write", "No [1]"), ("composer of String Quintet", "Johannes Brahms [1]"),
                      ("population of Broken Bow", "3,559 [1]")])
    tour = quickstart.main(tmp_path / "index", llm=llm, embedder=HashEmbedder())

    assert tour.indexed.count == 94  # every sample document is one passage (none is over 200 words)
    for answer in (tour.asked, tour.awaited, *tour.batch):
        assert answer.citations and answer.citations[0] == answer.passages[0].passage.id
    assert tour.awaited.text == tour.asked.text and tour.awaited.usage.total.cached_calls == 1
    assert [a.question for a in tour.batch] == quickstart.BATCH

    doubt = tour.batch[quickstart.BATCH.index(quickstart.DOUBT)]
    assert quickstart.MISLEADING in _documents(doubt)  # retrieved before it was removed, so the removal drops it
    assert tour.removed.removed == 1 and tour.removed.removed_documents == [quickstart.MISLEADING]
    assert tour.after_removal.question == quickstart.DOUBT
    assert quickstart.MISLEADING not in _documents(tour.after_removal)
    printed = capsys.readouterr().out
    assert "ask_many: 3/3 answered" in printed and f"removed {quickstart.MISLEADING}: 1 passage(s)" in printed


def _documents(answer: Answer) -> set[str]:
    return {document_id(hit.passage) for hit in answer.passages}
