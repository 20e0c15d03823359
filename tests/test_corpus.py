"""Where passages come from is one object (``tanglerag.corpus``): an index folder or a store answers for itself, and
nothing outside ``stores/`` and ``corpus.py`` asks which one it is, but the command line's option checks."""

import ast
import gc
import weakref
from pathlib import Path

import pytest

import tanglerag
from tanglerag.corpus import FolderCorpus, StoreCorpus, open_corpus
from tanglerag.errors import InputError
from tanglerag.index.passage_index import PassageIndex
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import IndexRetriever
from tanglerag.stages.store_retrieve import StoreRetriever
from tanglerag.stores.base import StoreError
from tanglerag.testing import HashEmbedder
from tests.source_trees import parsed

ROOT = Path(tanglerag.__file__).parent
KIND_CHECKS = {"stores", "corpus.py"}
"""Where telling an index folder from a store belongs: the stores themselves and the corpus built over them."""
OPTION_CHECKS = {"cli/store_options.py", "cli/index.py"}
"""Commands whose options mean one thing for an index folder and another for a store (--index, --out)."""


def _asks_which_kind(path: Path) -> bool:
    """Whether a module reads the ``index_folder`` capability or a runtime's old ``reads_store``."""
    return any(isinstance(node, ast.Attribute) and node.attr in {"index_folder", "reads_store"}
               for node in ast.walk(parsed(ROOT)[path]))


def test_only_the_stores_the_corpus_and_the_option_checks_ask_which_kind_of_corpus_it_is():
    asking = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if _asks_which_kind(p)}
    outside = {p for p in asking if p.split("/")[0] not in KIND_CHECKS}
    assert outside == OPTION_CHECKS


@pytest.fixture
def folder(tmp_path, passages):
    out = tmp_path / "idx"
    PassageIndex.build(passages, HashEmbedder(), Settings().index).save(out)
    return out


def test_an_index_folder_is_present_when_built_announces_its_versions_and_gives_a_read_only_view(folder, tmp_path):
    empty = FolderCorpus(tmp_path / "none", HashEmbedder, mmap=False)
    assert not empty.present() and empty.problem() is None  # not built yet: nothing wrong, nothing to answer from
    assert FolderCorpus(None, HashEmbedder, mmap=False).retriever(Settings(), dict, False) is None
    corpus = open_corpus(Settings(), HashEmbedder, folder)
    assert isinstance(corpus, FolderCorpus) and corpus.present() and corpus.loaded_index is None  # not loaded yet
    assert corpus.versions == folder and corpus.problem() is None  # the readiness check loads it
    assert isinstance(corpus.retriever(Settings(), dict, False), IndexRetriever)
    view = corpus.for_settings(Settings(), read_only=True)
    assert view.index.folder is None and corpus.index.folder == folder  # CDIT writes nothing beside the index
    assert view.index.passages is corpus.index.passages  # the same passages, not a copy


def test_an_index_handed_in_is_searched_whatever_the_store_and_announces_no_versions(folder):
    index = PassageIndex.load(folder, HashEmbedder())
    corpus = open_corpus(Settings.load(overrides=["store.backend=qdrant"]), HashEmbedder, None, index)
    assert isinstance(corpus, FolderCorpus) and corpus.present() and corpus.versions is None


class DownStore:
    """A store nobody answers for."""

    name = "down"

    def count(self) -> int:
        raise StoreError("down store: connection refused")


def test_a_store_is_always_present_says_why_it_cannot_answer_and_holds_no_index_to_replace(folder):
    settings = Settings.load(overrides=["store.backend=qdrant", "store.url=http://127.0.0.1:9"])
    corpus = open_corpus(settings, HashEmbedder, None, store=DownStore())
    assert isinstance(corpus, StoreCorpus) and corpus.present() and corpus.versions is None
    assert corpus.problem() == "down store: connection refused" and corpus.index is None
    with pytest.raises(InputError, match="store.backend=qdrant holds no index folder"):
        corpus.replace_index(PassageIndex.load(folder, HashEmbedder()))
    assert isinstance(corpus.retriever(settings, dict, False), StoreRetriever)
    assert corpus.question_search(settings) is not None


def test_a_finished_runtime_lets_go_of_its_corpus_at_once(folder):
    """A local Qdrant folder stays locked while its client lives: a runtime and its corpus must not hold each other
    (a cycle waits for the garbage collector), or the next command in one process cannot open it."""
    gc.disable()
    try:
        runtime = Runtime(Settings(), index_dir=folder, embedder=HashEmbedder())
        runtime.retriever()
        corpus = weakref.ref(runtime.corpus)
        del runtime
        assert corpus() is None
    finally:
        gc.enable()


def test_the_python_api_refuses_to_write_an_index_folder_a_store_would_not_answer_from(tmp_path):
    from tanglerag import Tanglerag

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "Leave is five days."}\n')
    rag = Tanglerag(tmp_path / "idx", Settings.load(overrides=["store.backend=qdrant", "store.url=http://127.0.0.1:9"]),
                    embedder=HashEmbedder())
    with pytest.raises(InputError, match="store.backend=qdrant answers from its collection"):
        rag.build(corpus)
    assert not (tmp_path / "idx").exists()  # refused before anything was written
