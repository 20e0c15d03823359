"""How fast the run browser (``serve --runs DIR``) answers on the stored runs: the first read of a run (parse every
prediction, fill tangles from the dataset where the run predates them), then a filtered grid and one question from
the cached run, through the HTTP API. Writes the "run-browser" section of docs/benchmarks.md.

Run: .venv/bin/python benchmarks/run_browser.py [--runs docs/results]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from run_io import write_section

from tanglerag.tables import Table

ROOT = Path(__file__).resolve().parents[1]


def client(runs: Path) -> TestClient:
    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.runtime import Runtime
    from tanglerag.service.app import create_app
    from tanglerag.settings import Settings
    from tanglerag.testing import CannedBackend, HashEmbedder

    runtime = Runtime(Settings.load(), index_dir=Path(tempfile.mkdtemp()) / "index",
                      llm=LLM(CannedBackend(), CallCache(None)), embedder=HashEmbedder())
    return TestClient(create_app(runtime, runs_dir=runs, warm_up=False))


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def measure(c: TestClient, runs: Path, name: str, repeats: int) -> dict:
    folder = runs / name
    first, grid = timed(lambda: c.get(f"/v1/runs/{name}/grid").json())
    warm = [timed(lambda: c.get(f"/v1/runs/{name}/grid", params={"show": "disagree"}))[0] for _ in range(repeats)]
    qid = grid["rows"][0]["id"]
    question = [timed(lambda: c.get(f"/v1/runs/{name}/question", params={"id": qid}))[0] for _ in range(repeats)]
    return {"name": name, "mb": (folder / "predictions.jsonl").stat().st_size / 1e6, "questions": grid["total"],
            "methods": len(grid["methods"]), "first": first, "grid": statistics.median(warm),
            "question": statistics.median(question)}


def report(rows: list[dict]) -> str:
    table = Table(["run", "predictions.jsonl", "questions x methods", "first read", "filtered grid (cached)",
                   "one question (cached)"],
                  [[f"`{r['name']}`", f"{r['mb']:.1f} MB", f"{r['questions']} x {r['methods']}",
                    f"{r['first'] * 1000:.0f} ms", f"{r['grid'] * 1000:.0f} ms", f"{r['question'] * 1000:.0f} ms"]
                   for r in rows])
    return ("## Run browser (`benchmarks/run_browser.py`, in-process HTTP, one run)\n\n"
            "The stored runs under `docs/results`, through `GET /v1/runs/{run}/grid` and `.../question`. The first "
            "read parses every prediction (and, for runs written before predictions kept tangles and passages, "
            "loads the run's dataset when it is on the machine); later requests use the cached run until its "
            "files change. Times are medians of the repeats.\n\n" + table.markdown())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=ROOT / "docs/results")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks.md")
    args = parser.parse_args()
    with client(args.runs) as c:
        names = [r["name"] for r in c.get("/v1/runs").json() if r["finished"]]
        largest = sorted(names, key=lambda n: -(args.runs / n / "predictions.jsonl").stat().st_size)[:3]
        rows = [measure(c, args.runs, name, args.repeats) for name in largest]
    for row in rows:
        print(row)
    write_section(args.out, "run-browser", report(rows))


if __name__ == "__main__":
    main()
