"""Question-level checkpoints for ``eval --out DIR``: each finished question is appended as it completes.

A re-run with the same folder and settings skips the questions already answered, whatever happened to the
LLM cache (it may live on another machine), and tries failed ones again. The folder's ``run.json`` names what
the answers depend on: the settings, the index (its version, or none) and a digest of each question's text, gold
and passages. A run where any of them changed is refused rather than mixed in, and so is one that would overwrite
a finished run's report with fewer questions; ``--restart`` discards the folder's run. A line torn by a kill
mid-write is dropped; a damaged line elsewhere is reported, never overwritten; a line the run cannot use is
reported and its question asked again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.report import OUTPUT_FILES
from tanglerag.family import family_of, sections
from tanglerag.fileio import atomic_write_text, reporting_disk_full
from tanglerag.index.manifest import fingerprint
from tanglerag.jsonio import loads as json_loads
from tanglerag.settings import Settings, upgrade

log = logging.getLogger(__name__)
CHECKPOINT_FILE = "checkpoint.jsonl"
RUN_FILE = "run.json"
NO_INDEX = "no index"
_RECORDED = ("index", "questions", "finished")  # in run.json beside the settings, each compared by its own rule
_PARTS = {"question": "text", "gold": "gold answers", "passages": "passages"}  # a question's digests, as named
# settings that change how a run goes, not what it answers: a resumed run may change them
_HOW_IT_RUNS = {"eval": {"concurrency", "engine", "ray_address", "ray_actors", "ray_batch_size", "fail_fast"},
                "llm": {"concurrency", "parallel", "timeout_s", "max_retries", "backoff_s", "n_threads", "cache"}}
_NOT_ANSWERS = {"cache_dir", "service", "otel", "conversation"}  # eval asks no follow-ups


def _unread_sections(methods: list[str]) -> set[str]:
    """Family sections no method of the run reads: only a family's own methods read its section, unless one of the
    run's methods may hand a question to any method (``auto``), so the run depends on them all."""
    used = [family_of(m) for m in methods]
    if any(f is not None and f.delegates_to_any for f in used):
        return set()
    return set(sections()) - {f.section_name for f in used if f is not None}


def run_identity(dataset: str, methods: list[str], metrics: list[str], pool: list[QAExample],
                 settings: Settings, index_dir: Path | None = None) -> dict[str, Any]:
    """What a question's predictions depend on: a checkpoint is reused only for the same identity. The pool of
    questions is part of it only when passages are retrieved from all of theirs (``eval.passage_scope=pooled``):
    with each question's own passages a run can grow (``--limit 30`` then ``--limit 60``) and keep its answers.
    The index is fingerprinted before the run loads it: a save in between makes a later resume refuse, never mix.
    Without one, the ``index`` settings are not part of it: each question's own passages are ranked in a flat index
    of their own, so no ``index.*`` setting (a new ``pq_refine`` default) can change an answer or stop a resume."""
    unread = _NOT_ANSWERS | _unread_sections(methods) | ({"index"} if index_dir is None else set())
    dump = {key: value for key, value in settings.model_dump(mode="json").items() if key not in unread}
    for section, fields in _HOW_IT_RUNS.items():
        dump[section] = {k: v for k, v in dump[section].items() if k not in fields}
    identity = {"dataset": dataset, "methods": methods, "metrics": metrics, "settings": dump,
                "index": fingerprint(index_dir) if index_dir else NO_INDEX, "questions": question_digests(pool)}
    if settings.eval.passage_scope == "pooled":
        identity["pool"] = hashlib.sha256("\n".join(ex.id for ex in pool).encode()).hexdigest()
    return identity


def question_digests(examples: list[QAExample]) -> dict[str, dict[str, str]]:
    """Per question id, digests of what its answers and scores depend on besides the settings: its text, its gold
    (answers, interpretations, and the metadata metrics read: long answers, wrong answers) and its own passages."""
    return {ex.id: {"question": _digest(ex.question), "gold": _digest([ex.answers, ex.interpretations, ex.metadata]),
                    "passages": _digest([p.model_dump(mode="json") for p in ex.passages])} for ex in examples}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


class StoredRun(BaseModel):
    """``run.json`` read back. The identity's parts compared as settings are kept as stored (extra fields);
    ``index`` and ``questions`` are None in a run written before they were recorded, ``finished`` until the run
    first went to the end (then: the questions its report covers)."""

    model_config = ConfigDict(extra="allow")
    settings: dict[str, Any] = Field(default_factory=dict)
    index: dict[str, str | int] | str | None = None
    questions: dict[str, dict[str, str]] | None = None
    finished: list[str] | None = None


class Checkpoint:
    """``>>> with Checkpoint(out, identity) as done: ...`` — ``done`` maps answered question ids to results.

    ``asked``: the ids of the questions this run reports on (a finished run's report covering others is not
    overwritten); ``restart``: discard the folder's run first (``eval --restart``).
    """

    def __init__(self, folder: Path, identity: dict[str, Any], *, asked: list[str] | None = None,
                 restart: bool = False) -> None:
        self.folder = folder
        self.identity = identity
        self.asked = asked
        self.restart = restart
        self.path = folder / CHECKPOINT_FILE
        self.run_file = folder / RUN_FILE
        self._record: dict[str, Any] = dict(identity)
        self._lock = FileLock(folder / ".eval.lock", timeout=0)
        self._fd: int | None = None  # the checkpoint, open for appending from the first answer to the run's end

    def __enter__(self) -> dict[str, QuestionResult]:
        with reporting_disk_full(self.folder):
            self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise InputError(f"another eval is writing to {self.folder}: wait for it or give another --out") from None
        try:
            self._check_files()
            if self.restart:
                self._discard()
            lines = self._read()
            self._check_identity(lines)
            return self._answered(lines)
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        finally:
            self._lock.release()

    def append(self, *results: QuestionResult) -> None:
        """Durable before it returns: a kill right after loses nothing of these questions. Several questions that
        finished together are written with one sync (each sync is milliseconds of waiting, so with one per question
        a run with many questions in flight would be held back by its checkpoint).

        The file stays open from the first append to the end of the run (which holds the folder's lock meanwhile),
        written unbuffered: an open and a close for each append were about 30% of its CPU, the sync's included (two
        or three questions an append at 64 in flight), and with no buffer of its own nothing is left to write, or to
        fail to, when it is closed."""
        payload = memoryview("".join(result.model_dump_json() + "\n" for result in results).encode())
        with reporting_disk_full(self.folder):
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            while payload:  # a write may take less than all of it (a full disk raises on the next one)
                payload = payload[os.write(self._fd, payload):]
            os.fsync(self._fd)

    def finish(self, ids: list[str]) -> None:
        """Every question the run asked is answered or recorded as failed: the report about to be written covers
        ``ids`` and becomes the folder's, which a later run of fewer questions may not overwrite."""
        self._record["finished"] = ids
        self._write_record()

    def _check_files(self) -> None:
        """Something other than a file where a run file belongs is named now, not met as a traceback mid-read."""
        for name in (CHECKPOINT_FILE, RUN_FILE, *OUTPUT_FILES):
            path = self.folder / name
            if path.exists() and not path.is_file():
                raise InputError(f"{path} is not a file, so {self.folder} cannot hold this run: move it away or "
                                 "give another --out")

    def _discard(self) -> None:
        """``--restart``: the folder's answers, run file and report go; the run starts over with these settings."""
        with reporting_disk_full(self.folder):
            for name in (CHECKPOINT_FILE, RUN_FILE, *OUTPUT_FILES):
                (self.folder / name).unlink(missing_ok=True)

    def _check_identity(self, lines: list[tuple[int, QuestionResult]]) -> None:
        """Refuse to mix answers of another run in; with none answered yet there is nothing to keep. ``run.json`` is
        then written again: the questions new in a grown run are recorded beside those it had."""
        answers = len({result.id for _, result in lines if not result.failed})
        if not answers:
            self.path.unlink(missing_ok=True)  # failed questions only: they run again under these settings
            self._write_record()
            return
        stored = self._stored()
        changes = self._changes(stored)
        if changes:
            raise InputError(f"{self.folder} holds a run with {' and '.join(changes)}: give another --out, or add "
                             f"--restart to discard its {answers} answers and start over")
        self._check_finished(stored)
        self._record = self._merged(stored)
        self._write_record()

    def _stored(self) -> StoredRun:
        try:
            stored = json_loads(self.run_file.read_bytes())
            if not isinstance(stored, dict):
                raise ValueError(f"a JSON {type(stored).__name__}, not an object")
            return StoredRun.model_validate(stored)
        except (OSError, ValueError) as exc:  # a ValidationError and a JSONDecodeError are ValueErrors
            raise InputError(f"{self.run_file} is missing or damaged ({_why(exc)}), so the answers in {self.path} "
                             "cannot be matched to settings: give another --out, or add --restart to discard them "
                             "and start over") from exc

    def _changes(self, stored: StoredRun) -> list[str]:
        """What differs between the stored run and this one, a phrase each; what the stored run did not record (an
        earlier release's run) is not compared."""
        changes = []
        settings = self._setting_changes(stored)
        if settings:
            changes.append(f"other settings ({', '.join(settings[:4])})")
        if stored.index is not None and stored.index != self.identity.get("index"):
            changes.append(f"another index ({_index_text(stored.index)}; now "
                           f"{_index_text(self.identity.get('index'))})")
        edited = _edited(stored.questions or {}, self.identity.get("questions", {}))
        if edited:
            more = f", and {len(edited) - 1} more" if len(edited) > 1 else ""
            changes.append(f"other questions ({edited[0]}{more})")
        return changes

    def _setting_changes(self, stored: StoredRun) -> list[str]:
        """Dotted paths where the settings, dataset, methods, metrics or pool differ from the stored run's."""
        current = {key: value for key, value in self.identity.items() if key not in _RECORDED}
        kept = dict(stored.model_extra or {})
        if "pool" not in current:
            kept.pop("pool", None)  # written when every run named its pool
        written = upgrade(stored.settings)  # in today's shape, as an earlier release may have written it
        # a run written before unread sections were left out names them all, and one written before a section was
        # known not to change answers (conversation, since eval asks no follow-ups) names that one
        kept["settings"] = {k: v for k, v in written.items() if k not in _NOT_ANSWERS
                            and (k in current.get("settings", {}) or k not in {*sections(), "index"})}
        return _differences(kept, current, {"settings": _default_settings()})

    def _check_finished(self, stored: StoredRun) -> None:
        """A run that went to the end keeps its report: a run into its folder that leaves some of its questions out
        (another --head, --limit or --random) would overwrite it with a report of fewer; one of more grows it."""
        if self.asked is None or not stored.finished:
            return
        left_out = set(stored.finished) - set(self.asked)
        if left_out:
            raise InputError(f"{self.folder} holds a finished run of {len(stored.finished)} questions, and this run "
                             f"of {len(self.asked)} leaves {len(left_out)} of them out (another --head, --limit or "
                             "--random), so its report would be overwritten: give another --out, or add --restart to "
                             "discard that run")

    def _merged(self, stored: StoredRun) -> dict[str, Any]:
        """What ``run.json`` holds from now on: the stored run as it was written (its settings are those of its
        answers), this run's index, and the questions of both: those this one leaves out keep their digests, for a
        later run that asks them again, and those new in a grown run are recorded."""
        if stored.index is None or stored.questions is None:
            log.warning("%s was written by an earlier tanglerag, which did not record the index and the questions: "
                        "a change to them before now cannot be detected; they are recorded from now on", self.run_file)
        return {**stored.model_dump(exclude_none=True), "index": self.identity.get("index", NO_INDEX),
                "questions": {**(stored.questions or {}), **self.identity.get("questions", {})}}

    def _write_record(self) -> None:
        atomic_write_text(self.run_file, json.dumps(self._record, indent=2, sort_keys=True) + "\n")

    def _answered(self, lines: list[tuple[int, QuestionResult]]) -> dict[str, QuestionResult]:
        """The answered questions, each from its last line holding one answer of every method of the run. Another
        line (edited by hand, or copied from another run) cannot be scored with the rest: it is reported with its
        number, and its question asked again."""
        methods = sorted(self.identity.get("methods") or [])
        answered: dict[str, QuestionResult] = {}
        unusable: dict[str, tuple[int, list[str]]] = {}
        for number, result in lines:
            found = sorted(p.method for p in result.predictions)
            if result.failed:
                continue
            if not methods or found == methods:
                answered[result.id] = result
            else:
                unusable[result.id] = (number, found)
        for qid, (number, found) in unusable.items():
            if qid not in answered:
                log.warning("%s line %d: question %s holds answers of %s, not of this run's methods (%s); it is "
                            "asked again", self.path, number, qid, ", ".join(found) or "no method", ", ".join(methods))
        return answered

    def _read(self) -> list[tuple[int, QuestionResult]]:
        if not self.path.exists():
            return []
        lines, torn_at = _numbered_results(self.path)
        if torn_at is not None:
            with self.path.open("r+b") as fh:  # torn by a kill mid-write: the question runs again
                fh.truncate(torn_at)
        return lines


def read_checkpoint(path: Path) -> tuple[list[QuestionResult], int | None]:
    """The results a checkpoint holds, and where a last line torn mid-write starts (None when whole).

    Only reads: a run still writing the file may be read too (the run browser does)."""
    lines, torn_at = _numbered_results(path)
    return [result for _, result in lines], torn_at


def _numbered_results(path: Path) -> tuple[list[tuple[int, QuestionResult]], int | None]:
    """``read_checkpoint``'s results with their line numbers, to name a line the run cannot use."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path} cannot be read ({_why(exc)}): move it away or give another --out") from exc
    results, offset = [], 0
    for number, line in enumerate(raw.splitlines(keepends=True), start=1):
        try:
            results.append((number, QuestionResult.model_validate_json(line)))
        except ValidationError as exc:
            if offset + len(line) < len(raw) or line.endswith(b"\n"):
                raise InputError(f"{path} line {number} is damaged ({exc.errors()[0]['msg']}): "
                                 "repair or delete that line to resume") from exc
            return results, offset
        offset += len(line)
    return results, None


def _why(exc: Exception) -> str:
    """A reading error in a few words: the first problem pydantic found, or the system's message."""
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"]))
        return f"{where}: {error['msg']}" if where else error["msg"]
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc)


def _index_text(index: object) -> str:
    """An index fingerprint as a person reads it: its version folder, size and save time; or "no index"."""
    if not isinstance(index, dict):
        return str(index)
    return f"version {index.get('version')} of {index.get('passages')} passages, saved {index.get('saved')}"


def _edited(stored: dict[str, dict[str, str]], current: dict[str, dict[str, str]]) -> list[str]:
    """"question q7's gold answers changed" for each question both runs hold whose digests differ, in this run's
    order. A question only one of them holds is no edit: a run on own passages may grow, or ask fewer."""
    edited = []
    for qid, digests in current.items():
        before = stored.get(qid)
        parts = [label for key, label in _PARTS.items() if before is not None and before.get(key) != digests.get(key)]
        if parts:
            edited.append(f"question {qid}'s {' and '.join(parts)} changed")
    return edited


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
