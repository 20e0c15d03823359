"""Shared by the report scripts: read an eval run folder, paired bootstrap between two methods."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def load(run: Path) -> tuple[dict, dict[str, dict[str, dict]]]:
    """(results.json, predictions by method then question id)."""
    results = json.loads((run / "results.json").read_text())
    per_q: dict[str, dict[str, dict]] = {}
    for line in (run / "predictions.jsonl").read_text().splitlines():
        row = json.loads(line)
        per_q.setdefault(row["method"], {})[row["id"]] = row
    return results, per_q


def paired_diff(per_q: dict, a: str, b: str, metric: str, samples: int = 2000, seed: int = 0):
    """Mean per-question difference a - b, its 95% bootstrap CI, and how often a wins / loses."""
    ids = sorted(set(per_q[a]) & set(per_q[b]))
    diff = np.array([per_q[a][i]["metrics"][metric] - per_q[b][i]["metrics"][metric] for i in ids], dtype=float)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(samples, len(diff)))].mean(axis=1)
    return diff.mean(), np.percentile(means, 2.5), np.percentile(means, 97.5), int((diff > 0).sum()), \
        int((diff < 0).sum())
