"""Question-level checkpoints for ``eval --out DIR``: each finished question is appended as it completes.

A re-run with the same folder and settings skips the questions already answered, whatever happened to the
LLM cache (it may live on another machine), and tries failed ones again. The folder's ``run.json`` names what
the answers depend on; a run with other settings is refused rather than mixed in. A line torn by a kill
mid-write is dropped; a damaged line elsewhere is reported, never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import ValidationError

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.eval.records import QuestionResult
from tanglerag.family import family_of, sections
from tanglerag.fileio import atomic_write_text, reporting_disk_full
from tanglerag.settings import Settings, upgrade

CHECKPOINT_FILE = "checkpoint.jsonl"
RUN_FILE = "run.json"
# settings that change how a run goes, not what it answers: a resumed run may change them
_HOW_IT_RUNS = {"eval": {"concurrency", "engine", "ray_address", "ray_actors", "ray_batch_size", "fail_fast"},
                "llm": {"concurrency", "parallel", "timeout_s", "max_retries", "backoff_s", "n_threads", "cache"}}
_NOT_ANSWERS = {"cache_dir", "service"}


def _unread_sections(methods: list[str]) -> set[str]:
    """Family sections no method of the run reads: only a family's own methods read its section, unless one of the
    run's methods may hand a question to any method (``auto``), so the run depends on them all."""
    used = [family_of(m) for m in methods]
    if any(f is not None and f.delegates_to_any for f in used):
        return set()
    return set(sections()) - {f.section_name for f in used if f is not None}


def run_identity(dataset: str, methods: list[str], metrics: list[str], pool: list[QAExample],
                 settings: Settings) -> dict[str, Any]:
    """What a question's predictions depend on: a checkpoint is reused only for the same identity. The pool of
    questions is part of it only when passages are retrieved from all of theirs (``eval.passage_scope=pooled``):
    with each question's own passages a run can grow (``--limit 30`` then ``--limit 60``) and keep its answers."""
    unread = _NOT_ANSWERS | _unread_sections(methods)
    dump = {key: value for key, value in settings.model_dump(mode="json").items() if key not in unread}
    for section, fields in _HOW_IT_RUNS.items():
        dump[section] = {k: v for k, v in dump[section].items() if k not in fields}
    identity = {"dataset": dataset, "methods": methods, "metrics": metrics, "settings": dump}
    if settings.eval.passage_scope == "pooled":
        identity["pool"] = hashlib.sha256("\n".join(ex.id for ex in pool).encode()).hexdigest()
    return identity


class Checkpoint:
    """``>>> with Checkpoint(out, identity) as done: ...`` — ``done`` maps answered question ids to results."""

    def __init__(self, folder: Path, identity: dict[str, Any]) -> None:
        self.folder = folder
        self.identity = identity
        self.path = folder / CHECKPOINT_FILE
        self._lock = FileLock(folder / ".eval.lock", timeout=0)

    def __enter__(self) -> dict[str, QuestionResult]:
        with reporting_disk_full(self.folder):
            self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise InputError(f"another eval is writing to {self.folder}: wait for it or give another --out") from None
        try:
            answered = {r.id: r for r in self._read() if not r.failed}
            self._check_identity(bool(answered))
            return answered
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def append(self, result: QuestionResult) -> None:
        """Durable before it returns: a kill right after loses nothing of this question."""
        with reporting_disk_full(self.folder), self.path.open("a", encoding="utf-8") as fh:
            fh.write(result.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _check_identity(self, answered: bool) -> None:
        """Refuse to mix answers of other settings in; with none answered yet there is nothing to keep."""
        run_file = self.folder / RUN_FILE
        if not answered:
            self.path.unlink(missing_ok=True)  # failed questions only: they run again under these settings
            atomic_write_text(run_file, json.dumps(self.identity, indent=2, sort_keys=True) + "\n")
            return
        try:
            stored = json.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{run_file} is missing or damaged ({exc}), so the answers in {self.path} cannot be "
                             "matched to settings: give another --out, or delete that file to start over") from exc
        if "pool" not in self.identity:
            stored.pop("pool", None)  # written when every run named its pool
        written = upgrade(stored.get("settings", {}))  # in today's shape, as an earlier release may have written it
        # a run written before unread sections were left out names them all
        stored["settings"] = {k: v for k, v in written.items() if k in self.identity["settings"] or k not in sections()}
        differ = _differences(stored, self.identity, {"settings": _default_settings()})
        if differ:
            raise InputError(f"{self.folder} holds a run with other settings ({', '.join(differ[:4])}): give "
                             f"another --out, or delete {self.path} to start over")

    def _read(self) -> list[QuestionResult]:
        if not self.path.exists():
            return []
        results, torn_at = read_checkpoint(self.path)
        if torn_at is not None:
            with self.path.open("r+b") as fh:  # torn by a kill mid-write: the question runs again
                fh.truncate(torn_at)
        return results


def read_checkpoint(path: Path) -> tuple[list[QuestionResult], int | None]:
    """The results a checkpoint holds, and where a last line torn mid-write starts (None when whole).

    Only reads: a run still writing the file may be read too (the run browser does)."""
    raw = path.read_bytes()
    results, offset = [], 0
    for number, line in enumerate(raw.splitlines(keepends=True), start=1):
        try:
            results.append(QuestionResult.model_validate_json(line))
        except ValidationError as exc:
            if offset + len(line) < len(raw) or line.endswith(b"\n"):
                raise InputError(f"{path} line {number} is damaged ({exc.errors()[0]['msg']}): "
                                 "repair or delete that line to resume") from exc
            return results, offset
        offset += len(line)
    return results, None


def _default_settings() -> dict[str, Any]:
    return Settings().model_dump(mode="json")


def _differences(stored: Any, current: Any, default: Any, path: str = "") -> list[str]:
    """Dotted paths where two identities differ. A setting the stored run does not name (tanglerag gained it after
    the run was written) differs only when it is set to other than its default: a new setting's default keeps the
    old behaviour, so an unfinished run resumes across an upgrade."""
    if isinstance(stored, dict) and isinstance(current, dict):
        default = default if isinstance(default, dict) else {}
        return [d for key in sorted(set(stored) | set(current))
                if key in stored or key not in default or current.get(key) != default[key]
                for d in _differences(stored.get(key), current.get(key), default.get(key),
                                      f"{path}.{key}" if path else key)]
    return [] if stored == current else [path or "identity"]
