"""The embedding cache: each text embedded once per model and setting, across instances (processes share the file),
runs and re-runs; a damaged file is moved aside; ``embedding.cache=false`` bypasses it."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from tanglerag import Tanglerag
from tanglerag.embedding_cache import FILE_NAME, CachedEmbedder
from tanglerag.embeddings import Embedder
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder, canned_llm


class Counting(HashEmbedder):
    """The hashing embedder, counting the texts it was asked to embed."""

    def __init__(self, model_name: str = "hash-64") -> None:
        super().__init__(model_name)
        self.asked: list[str] = []

    def embed(self, texts, *, show_progress=False):
        self.asked += texts
        return super().embed(texts)


def test_a_text_is_embedded_once_and_read_back_byte_identical(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, tmp_path / FILE_NAME)
    first = cached.embed(["alpha beta", "gamma", "alpha beta"])
    again = cached.embed(["gamma", "delta", "alpha beta"])
    assert inner.asked == ["alpha beta", "gamma", "delta"]  # duplicates and known texts are not embedded again
    assert np.array_equal(again, np.stack([first[1], HashEmbedder().embed(["delta"])[0], first[0]]))
    assert cached.embedded == 3 and cached.hits == 3 and cached.embed([]).shape == (0, 64)


def test_another_instance_and_another_process_read_the_same_file(tmp_path):
    path = tmp_path / FILE_NAME
    CachedEmbedder(Counting(), path).embed(["shared text"])
    later = Counting()
    CachedEmbedder(later, path).embed(["shared text"])
    script = ("import sys; from tanglerag.embedding_cache import CachedEmbedder; from tanglerag.testing import "
              "HashEmbedder\nclass Refuse(HashEmbedder):\n    def embed(self, texts, *, show_progress=False):\n"
              "        raise SystemExit('embedded ' + repr(texts))\n"
              "print(CachedEmbedder(Refuse(), sys.argv[1]).embed(['shared text']).shape)")
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60)
    assert later.asked == [] and run.returncode == 0 and run.stdout.strip() == "(1, 64)", run.stderr


def test_another_model_or_normalisation_never_reads_a_vector_it_did_not_make(tmp_path):
    path = tmp_path / FILE_NAME
    CachedEmbedder(Counting("model-a"), path).embed(["text"])
    other_model, raw = Counting("model-b"), Counting("model-a")
    CachedEmbedder(other_model, path).embed(["text"])
    CachedEmbedder(raw, path, normalize=False).embed(["text"])
    assert other_model.asked == ["text"] and raw.asked == ["text"]


class Int8Counting(Counting):
    """The counting embedder under the int8 MiniLM's identity: the fp32 model's name, other vectors."""

    identity = "all-MiniLM-L6-v2-onnx-int8"


def test_two_backends_of_one_model_never_read_each_others_vectors(tmp_path):
    path = tmp_path / FILE_NAME
    fp32, int8 = Counting("all-MiniLM-L6-v2"), Int8Counting("all-MiniLM-L6-v2")
    CachedEmbedder(fp32, path).embed(["text"])
    cached = CachedEmbedder(int8, path)
    cached.embed(["text"])
    assert int8.asked == ["text"] and cached.identity == "all-MiniLM-L6-v2-onnx-int8"
    again = Counting("all-MiniLM-L6-v2")  # sentence-transformers' identity is its model's name, as keys were before
    CachedEmbedder(again, path).embed(["text"])
    assert again.asked == []


def test_a_damaged_file_is_moved_aside_and_the_run_goes_on(tmp_path, caplog):
    path = tmp_path / FILE_NAME
    path.write_bytes(b"not a database at all" * 100)
    inner = Counting()
    assert CachedEmbedder(inner, path).embed(["x"]).shape == (1, 64) and inner.asked == ["x"]
    assert "embedding cache" in caplog.text and "is damaged" in caplog.text
    assert list(tmp_path.glob(f"{FILE_NAME}.damaged-*")) and CachedEmbedder(Counting(), path).embed(["x"]).any()


def test_the_runtime_caches_by_setting_and_a_rerun_of_an_eval_embeds_nothing(tmp_path):
    settings = Settings.load(overrides=[f"cache_dir={tmp_path}"])
    assert isinstance(Runtime(settings).embedder, CachedEmbedder)
    off = Settings.load(overrides=[f"cache_dir={tmp_path}", "embedding.cache=false"])
    assert type(Runtime(off).embedder) is Embedder
    runs = []
    for out in ("first", "second"):
        inner = Counting()
        embedder = CachedEmbedder(inner, tmp_path / FILE_NAME)
        Tanglerag(settings=settings, llm=canned_llm(default="unknown"), embedder=embedder).evaluate(
            "ramdocs-sample", methods=["concat"], limit=3, out=tmp_path / out)
        runs.append((embedder.embedded, embedder.hits))
    assert runs[0][0] > 0 and runs[1] == (0, sum(runs[0]))


def test_the_cache_file_is_private(tmp_path):
    CachedEmbedder(HashEmbedder(), tmp_path / FILE_NAME).embed(["private text"])
    assert (Path(tmp_path / FILE_NAME).stat().st_mode & 0o077) == 0
