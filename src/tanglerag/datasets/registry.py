"""Dataset names, formats and tasks.

``--dataset`` takes a registered name or a path. The format comes from ``--format`` or
is detected from the first record, so e.g. any RAMDocs-format JSONL file just works. Each
dataset declares its task: ``qa`` (answer methods, answer metrics) or ``retrieval`` (ORCA-ShARC:
the PCAS retrieval methods, ranking metrics), so ``eval`` picks the runner by task.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Literal

from tanglerag.datasets import ambigdocs, asqa, conflictqa, generic_qa, orca_sharc, ramdocs, situatedqa
from tanglerag.datasets.base import QAExample, iter_json_records
from tanglerag.errors import DatasetError
from tanglerag.registry import Registry

FORMATS: Registry[ModuleType] = Registry("dataset format")
"""Format name -> the module that detects and loads it; detection tries them in this order, most specific first."""
for _module in (ambigdocs, asqa, situatedqa, conflictqa, ramdocs, generic_qa):
    FORMATS.register(_module.FORMAT, _module)


def _bundled(name: str) -> Callable[[], Path]:
    return lambda: Path(str(resources.files("tanglerag") / "sample_data" / name))


def shared_data(relative: str) -> Path:
    """Dev data lives outside the repo; TANGLERAG_DATA_DIR points at it (default ../shared/data)."""
    return Path(os.environ.get("TANGLERAG_DATA_DIR", "../shared/data")) / relative


def _shared(relative: str) -> Callable[[], Path]:
    return lambda: shared_data(relative)


REGISTERED: Registry[tuple[Callable[[], Path], str]] = Registry("dataset")
"""Dataset name -> (where its file is, its format), for ``--dataset NAME``."""
REGISTERED.register("ramdocs-sample", (_bundled("ramdocs_sample.jsonl"), ramdocs.FORMAT))
REGISTERED.register("ramdocs", (_shared("ramdocs/dev.jsonl"), ramdocs.FORMAT))
REGISTERED.register("asqa-sample", (_bundled("asqa_sample.jsonl"), asqa.FORMAT))
REGISTERED.register("asqa", (_shared("asqa/dev.jsonl"), asqa.FORMAT))
REGISTERED.register("situatedqa-temp", (_shared("situatedqa/temp.dev.jsonl"), situatedqa.FORMAT))
REGISTERED.register("situatedqa-geo", (_shared("situatedqa/geo.dev.jsonl"), situatedqa.FORMAT))
REGISTERED.register("conflictqa", (_shared("conflictqa/strategyqa-chatgpt.jsonl"), conflictqa.FORMAT))
REGISTERED.register("freshness", (lambda: Path(__file__).resolve().parents[3] / "benchmarks/data/freshness_dev.jsonl",
                                 generic_qa.FORMAT))  # in the repo: benchmarks/freshness_set.py wrote it


Task = Literal["qa", "retrieval"]


def dataset_task(name_or_path: str) -> Task:
    """``retrieval`` for ORCA-ShARC files or folders (built by ``pcas build``), ``qa`` for every other dataset."""
    if name_or_path in REGISTERED:
        return "qa"
    return "retrieval" if orca_sharc.looks_like(Path(name_or_path)) else "qa"


def detect_format(path: Path) -> str:
    for _, record in iter_json_records(path):
        for name, module in FORMATS.items():
            if module.looks_like(record):
                return name
        raise DatasetError(f"{path}: cannot tell the format from its first record (keys: {sorted(record)}); "
                           f"pass --format ({', '.join(FORMATS)})")
    raise DatasetError(f"{path} holds no records")


def load_dataset(name_or_path: str, fmt: str | None = None, limit: int | None = None,
                 sample: int | None = None, seed: int = 0) -> tuple[str, list[QAExample]]:
    """Return (dataset name, examples): all, the first ``limit``, or a seeded random ``sample``.

    A sample keeps the file's order, so runs of different sizes with one seed share no ordering
    effects; it exists because dev files are often sorted (RAMDocs puts its one-answer questions first).
    """
    if limit is not None and sample is not None:
        raise DatasetError("pass either a limit or a sample size, not both")
    if limit is not None and limit < 1:
        raise DatasetError(f"limit must be at least 1, got {limit}")
    if sample is not None and sample < 1:
        raise DatasetError(f"sample size must be at least 1, got {sample}")
    if name_or_path in REGISTERED:
        locate, registered_format = REGISTERED.get(name_or_path)
        path, fmt, name = locate(), fmt or registered_format, name_or_path
        if not path.exists():
            raise DatasetError(f"dataset {name!r} expects its file at {path}; set TANGLERAG_DATA_DIR or pass a path")
    else:
        path, name = Path(name_or_path), Path(name_or_path).stem
        if not path.exists():
            raise DatasetError(f"{name_or_path!r} is neither a registered dataset ({', '.join(REGISTERED)}) "
                               "nor an existing file")
        fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise DatasetError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    examples = FORMATS.get(fmt).load(path)
    if not examples:
        raise DatasetError(f"dataset {name_or_path} is empty")
    if sample is not None:
        if sample > len(examples):
            raise DatasetError(f"sample of {sample} asked from {name_or_path}, which has {len(examples)} examples")
        chosen = sorted(random.Random(seed).sample(range(len(examples)), sample))
        return name, [examples[i] for i in chosen]
    return name, examples[:limit] if limit is not None else examples
