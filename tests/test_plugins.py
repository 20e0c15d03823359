"""Adding a store, a file loader, an embedder or a method family is one new module plus one registry line: each
test writes the module into a folder on ``sys.path``, adds the line, and uses the plug-in through the code path a
user's settings take. The registries are lazy: a name is known before its module is imported, and a module whose
extra is missing is refused in one line naming the ``pip install``."""

import sys
import textwrap

import numpy as np
import pytest

from tanglerag.config import EmbeddingConfig
from tanglerag.embeddings import EMBEDDERS, Embedder
from tanglerag.errors import ConfigError
from tanglerag.family import FAMILIES
from tanglerag.ingest import read_folder
from tanglerag.loaders import LOADERS
from tanglerag.methods.base import make_method
from tanglerag.registry import DuplicateName, Registry
from tanglerag.settings import Settings
from tanglerag.stores.factory import build_store
from tanglerag.stores.registry import STORES
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Write ``source`` as module ``name`` importable from a folder on ``sys.path``."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        sys.modules.pop(name, None)

    return write


def test_a_lazy_name_is_known_before_its_module_is_imported_and_resolved_once():
    table: Registry[object] = Registry("thing")
    table.register_lazy("wrap", "textwrap:dedent")
    table.register_lazy("wrap", "textwrap:dedent")  # the same line twice is harmless
    assert table.names() == ["wrap"] and "wrap" in table and table.resolved() == []
    assert table.get("wrap") is textwrap.dedent and table.resolved() == [textwrap.dedent]
    version = table.version
    table.register_lazy("wrap", "textwrap:dedent")  # and once its item was imported
    assert table.version == version and table.get("wrap") is textwrap.dedent
    with pytest.raises(DuplicateName):
        table.register_lazy("wrap", "textwrap:indent")


def test_a_plug_in_whose_extra_is_missing_is_refused_with_the_install_line(plugin):
    plugin("needs_extra", "import faraway_client_sdk\n")
    table: Registry[object] = Registry("store")
    table.register_lazy("faraway", "needs_extra:Store", extra="faraway")
    with pytest.raises(ConfigError, match=r"store 'faraway' needs faraway_client_sdk: "
                                          r"pip install 'tanglerag\[faraway\]'"):
        table.get("faraway")


def test_a_store_is_one_module_and_one_line(plugin):
    plugin("memo_store", """
        from tanglerag.stores.base import ServerStore

        class MemoStore(ServerStore):
            name = "memo"

            def __init__(self, collection, **options):
                self.collection, self.options = collection, options
    """)
    STORES.register_lazy("memo", "memo_store:MemoStore")
    try:
        settings = Settings.load(overrides=["store.backend=memo", "store.url=http://127.0.0.1:9", "store.collection=c"])
        store = build_store(settings, HashEmbedder())
        assert type(store).__name__ == "MemoStore" and store.collection == "c"
        assert store.options["url"] == "http://127.0.0.1:9"
    finally:
        STORES.remove("memo")


def test_a_file_loader_is_one_module_and_one_line(plugin, tmp_path):
    plugin("csv_loader", """
        from tanglerag.loaders.base import Loaded, Segment

        def load_csv(name, data):
            rows = [line.split(",") for line in data.decode().splitlines()]
            return Loaded(segments=[Segment(text=". ".join(" is ".join(row) for row in rows))], title=name)
    """)
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "prices.csv").write_text("tea,3 euros\ncoffee,4 euros\n")
    LOADERS.register_lazy("csv", "csv_loader:load_csv")
    try:
        passages = list(read_folder(folder))
    finally:
        LOADERS.remove("csv")
    assert [p.text for p in passages] == ["tea is 3 euros. coffee is 4 euros"]


def test_an_embedder_is_one_module_and_one_line(plugin):
    plugin("ones_embedder", """
        import numpy as np

        class Ones:
            identity = model_name = "ones"
            dimension = 3

            def __init__(self, config):
                self.config = config

            def warm_up(self):
                pass

            def embed(self, texts, *, show_progress=False):
                return np.ones((len(texts), 3), dtype=np.float32)
    """)
    EMBEDDERS.register_lazy("ones", "ones_embedder:Ones")
    try:
        embedder = Embedder(EmbeddingConfig(backend="ones"))
        assert embedder.identity == "ones" and np.array_equal(embedder.embed(["a", "b"]), np.ones((2, 3)))
    finally:
        EMBEDDERS.remove("ones")


def test_a_method_family_is_one_module_and_one_line(plugin, llm_factory):
    plugin("first_passage", """
        from tanglerag.family import Family
        from tanglerag.methods.base import Method, MethodOutput

        class FirstPassage(Method):
            name = "first-passage"
            paper = "baseline"
            description = "the first passage's text"
            calls = "0"

            async def arun(self, question, passages):
                return MethodOutput(passages[0].passage.text, [passages[0].passage.id])

        FAMILY = Family(name="first_passage", methods=(FirstPassage,))
    """)
    FAMILIES.register_lazy("first_passage", "first_passage:FAMILY")
    try:
        llm = llm_factory(CannedBackend(responder=lambda messages: "unused"), persistent=False)
        method = make_method("first-passage", resources(llm, Settings.load()))
        answer = method.answer(Question(text="what?"), as_retrieved([Passage(id="p1", text="Tea is 3 euros.")]))
        assert answer.text.startswith("Tea is 3 euros.") and answer.citations == ["p1"]
    finally:
        FAMILIES.remove("first_passage")
