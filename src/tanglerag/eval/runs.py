"""Eval runs read back from disk for the run browser: a grid of questions x methods, sliced by what went wrong.

A run is a folder that ``eval --out`` wrote: ``predictions.jsonl`` once it finished, or only ``checkpoint.jsonl``
while it is still running or after it was interrupted (the questions finished so far are shown). Everything
here only reads: a run being written can be browsed.

>>> runs = RunLibrary(Path("results"))  # doctest: +SKIP
>>> runs.get("corg/pairwise").grid(GridQuery(show="a-beats-b", a="corg", b="base"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections import Counter
from functools import cached_property
from pathlib import Path
from typing import Literal

from cachetools import LRUCache
from pydantic import BaseModel, Field, ValidationError

from tanglerag.datasets.registry import REGISTERED, load_dataset
from tanglerag.errors import DatasetError, InputError
from tanglerag.eval.checkpoint import CHECKPOINT_FILE, RUN_FILE, read_checkpoint
from tanglerag.eval.records import Prediction
from tanglerag.types import Passage

PREDICTIONS_FILE = "predictions.jsonl"
RESULTS_FILE = "results.json"
UNTANGLED = "untangled"  # the tangle filter's name for questions whose dataset names no tangle


class UnknownRun(InputError):
    """No run of that name under the folder being browsed."""


class RunInfo(BaseModel):
    name: str = Field(description="the run folder, relative to the browsed folder")
    dataset: str
    finished: bool = Field(description="false while only the checkpoint exists (running, or interrupted)")


Show = Literal["all", "wrong", "a-beats-b", "disagree"]


class GridQuery(BaseModel):
    """Which rows to show: ``wrong`` (method a is wrong), ``a-beats-b`` (a right where b is wrong), ``disagree``
    (some method right and another wrong), each narrowed to one tangle kind if given."""

    metric: str | None = Field(None, description="the score shown and judged (default: the run's first metric)")
    right_at: float = Field(0.5, ge=0, le=1, description="a score at or above this counts as right")
    show: Show = "all"
    a: str | None = Field(None, description="default: the run's first method")
    b: str | None = Field(None, description="default: the run's second method")
    tangle: str | None = Field(None, description=f"a tangle kind, or {UNTANGLED!r} for questions with none")


class Cell(BaseModel):
    answer: str
    score: float | None = Field(description="None where the metric does not apply to this method")
    right: bool | None


class Row(BaseModel):
    id: str
    question: str
    gold: list[str]
    tangles: list[str]
    cells: dict[str, Cell]


class Grid(BaseModel):
    run: RunInfo
    methods: list[str]
    metrics: list[str]
    tangles: dict[str, int] = Field(description="how many of the run's questions hold each tangle kind")
    query: GridQuery = Field(description="the query with its defaults filled in")
    total: int = Field(description="questions in the run")
    means: dict[str, float | None] = Field(description="each method's mean score over the rows shown")
    rows: list[Row]


class Run:
    """One run's predictions, grouped by question (in the order the run answered them).

    ``dataset_passages``: for runs whose predictions kept only passage ids, the passages their registered
    dataset holds under those ids (closed-corpus datasets such as RAMDocs), so their text can still be shown."""

    def __init__(self, info: RunInfo, predictions: list[Prediction],
                 dataset_passages: dict[str, Passage] | None = None) -> None:
        self.info = info
        self.predictions = predictions
        self.dataset_passages = dataset_passages or {}

    @cached_property
    def by_question(self) -> dict[str, dict[str, Prediction]]:
        grouped: dict[str, dict[str, Prediction]] = {}
        for prediction in self.predictions:
            grouped.setdefault(prediction.id, {})[prediction.method] = prediction
        return grouped

    @cached_property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(p.method for p in self.predictions))

    @cached_property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(name for p in self.predictions for name in p.metrics))

    def question(self, qid: str) -> dict[str, Prediction]:
        """Every method's prediction for one question."""
        if qid not in self.by_question:
            raise UnknownRun(f"run {self.info.name!r} has no question {qid!r}")
        return self.by_question[qid]

    def grid(self, query: GridQuery) -> Grid:
        query = self._filled(query)
        rows = [self._row(qid, answers, query) for qid, answers in self.by_question.items()]
        shown = [row for row in rows if _tangle_matches(row, query.tangle) and _shown(row, query)]
        return Grid(run=self.info, methods=self.methods, metrics=self.metrics, query=query, total=len(rows),
                    tangles=dict(Counter(kind for row in rows for kind in row.tangles)),
                    means={m: _mean([row.cells[m].score for row in shown if m in row.cells]) for m in self.methods},
                    rows=shown)

    def _filled(self, query: GridQuery) -> GridQuery:
        """The query with the run's defaults, every name in it checked against the run."""
        metric = query.metric or (self.metrics[0] if self.metrics else None)
        a = query.a or self.methods[0]
        b = query.b or next((m for m in self.methods if m != a), None)
        if metric is not None and metric not in self.metrics:
            raise InputError(f"metric {metric!r} is not in run {self.info.name!r}; it has {', '.join(self.metrics)}")
        for method in (a, b):
            if method is not None and method not in self.methods:
                raise InputError(f"method {method!r} is not in run {self.info.name!r}; it has "
                                 f"{', '.join(self.methods)}")
        if query.show == "a-beats-b" and (b is None or a == b):
            raise InputError("show=a-beats-b compares two different methods: give a and b")
        return query.model_copy(update={"metric": metric, "a": a, "b": b})

    def _row(self, qid: str, answers: dict[str, Prediction], query: GridQuery) -> Row:
        first = next(iter(answers.values()))
        cells = {}
        for method, prediction in answers.items():
            score = prediction.metrics.get(query.metric) if query.metric else None
            cells[method] = Cell(answer=prediction.answer, score=score,
                                 right=None if score is None else score >= query.right_at)
        return Row(id=qid, question=first.question, gold=first.gold, tangles=first.tangles, cells=cells)


def _tangle_matches(row: Row, tangle: str | None) -> bool:
    if tangle is None:
        return True
    return not row.tangles if tangle == UNTANGLED else tangle in row.tangles


def _shown(row: Row, query: GridQuery) -> bool:
    def right(method: str | None) -> bool | None:
        cell = row.cells.get(method) if method else None
        return cell.right if cell else None

    if query.show == "wrong":
        return right(query.a) is False
    if query.show == "a-beats-b":
        return right(query.a) is True and right(query.b) is False
    if query.show == "disagree":
        judged = {cell.right for cell in row.cells.values() if cell.right is not None}
        return judged == {True, False}
    return True


def _mean(scores: list[float | None]) -> float | None:
    judged = [s for s in scores if s is not None]
    return sum(judged) / len(judged) if judged else None


def find_runs(root: Path) -> dict[str, Path]:
    """The run folders under ``root`` (itself included, then named after itself) by name; hidden folders (a
    ``.venv``, ``.git``) are not entered and links not followed."""
    if not root.is_dir():
        raise InputError(f"runs folder {root} is not a folder")
    found = {}
    for here, subfolders, _ in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        folder = Path(here)
        if _is_run(folder):
            found[_run_name(root, folder)] = folder
    return found


def run_folder(root: Path, name: str) -> Path | None:
    """The folder of the run ``find_runs`` lists as ``name``, found without walking all of ``root``; None for
    a name it does not list."""
    parts = Path(name).parts
    if parts and not Path(name).is_absolute() and not any(p.startswith(".") for p in parts):  # also '..'
        folder = root.joinpath(*parts)
        # find_runs neither follows links nor enters hidden folders: a name through a link is not one it lists
        through_link = any(root.joinpath(*parts[:i]).is_symlink() for i in range(1, len(parts) + 1))
        if not through_link and folder.is_dir() and _is_run(folder):
            return folder
    return root if name == _run_name(root, root) and _is_run(root) else None


def _is_run(folder: Path) -> bool:
    return (folder / PREDICTIONS_FILE).is_file() or (folder / CHECKPOINT_FILE).is_file()


def _run_name(root: Path, folder: Path) -> str:
    relative = folder.relative_to(root)
    return relative.as_posix() if relative.parts else root.resolve().name


def read_run(name: str, folder: Path) -> Run:
    """A finished run's predictions, or the finished questions of one still running (from its checkpoint)."""
    finished = (folder / PREDICTIONS_FILE).is_file()
    if finished:
        predictions = _read_predictions(name, folder / PREDICTIONS_FILE)
    elif (folder / CHECKPOINT_FILE).is_file():
        results, _ = read_checkpoint(folder / CHECKPOINT_FILE)
        predictions = [p for r in results for p in r.predictions]
    else:  # started, stopped before its first question: run.json only
        predictions = []
    if not predictions:
        raise UnknownRun(f"run {name!r} has no answered question yet")
    info = RunInfo(name=name, dataset=_dataset_name(folder), finished=finished)
    if any(p.tangles for p in predictions) and any(p.passages for p in predictions):
        return Run(info, predictions)
    return _completed_from_dataset(info, predictions)


def _read_predictions(name: str, path: Path) -> list[Prediction]:
    """Every prediction of the file; a line that is not one (not UTF-8, not JSON, not a prediction) is an error
    naming the run, the file and the line, so the browser shows one line for this run and the others still open.

    Lines are split on the bytes, before decoding: a damaged line is then found as itself, and a prediction's text
    holding a Unicode line separator (which ``str.splitlines`` would cut at) stays one line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise InputError(f"run {name!r}: cannot read {path} ({exc.strerror or exc})") from None
    predictions = []
    for number, line in enumerate(lines, start=1):
        where = f"run {name!r}: {path} line {number}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{where} is not UTF-8 text (byte {exc.start + 1} of the line); the file is damaged: "
                             "restore it, or evaluate again into a new --out folder") from None
        if not text.strip():
            continue
        try:
            predictions.append(Prediction.model_validate_json(text))
        except ValidationError as exc:
            raise InputError(f"{where} is not a prediction ({exc.errors()[0]['msg']})") from None
    return predictions


def _dataset_name(folder: Path) -> str:
    for file in (RESULTS_FILE, RUN_FILE):
        try:
            return str(json.loads((folder / file).read_text(encoding="utf-8"))["dataset"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return ""


def _completed_from_dataset(info: RunInfo, predictions: list[Prediction]) -> Run:
    """A run written before predictions kept tangles and passages gets them from its registered dataset, when
    that is on this machine (ids are stable: loaders number questions by their place in the file)."""
    if info.dataset not in REGISTERED:
        return Run(info, predictions)
    try:
        _, examples = load_dataset(info.dataset)
    except DatasetError:
        return Run(info, predictions)
    tangles = {example.id: example.tangles for example in examples}
    if not any(p.tangles for p in predictions):
        predictions = [p.model_copy(update={"tangles": tangles.get(p.id, [])}) for p in predictions]
    return Run(info, predictions, {p.id: p for example in examples for p in example.passages})


class RunLibrary:
    """The runs under one folder; a run is read once and read again only when its files change."""

    def __init__(self, root: Path, keep: int = 4) -> None:
        self.root = root
        # the ``keep`` runs asked for last, by name, each with the stamp of the files it was read from
        self._read: LRUCache[str, tuple[tuple[int, ...], Run]] = LRUCache(maxsize=keep)

    def infos(self) -> list[RunInfo]:
        return [RunInfo(name=name, dataset=_dataset_name(folder), finished=(folder / PREDICTIONS_FILE).is_file())
                for name, folder in find_runs(self.root).items()]

    def get(self, name: str) -> Run:
        folder = run_folder(self.root, name)
        if folder is None:
            raise UnknownRun(f"no run named {name!r} under {self.root.name}/; GET /v1/runs lists them")
        stamp = tuple(n for file in (PREDICTIONS_FILE, CHECKPOINT_FILE) for n in _stat(folder / file))
        cached = self._read.get(name)
        if cached is None or cached[0] != stamp:
            cached = self._read[name] = (stamp, read_run(name, folder))
        return cached[1]


def _stat(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return (0, 0)
    return (stat.st_mtime_ns, stat.st_size)
