import os

import pytest

from tanglerag.eval.runs import PREDICTIONS_FILE, GridQuery, RunLibrary
from tests.eval.run_folders import write_run


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name in ("a", "b", "c"):
        write_run(root / name)
    return root


def test_a_run_is_read_once_until_its_predictions_change(root):
    library = RunLibrary(root)
    first = library.get("a")
    assert library.get("a") is first
    predictions = root / "a" / PREDICTIONS_FILE
    stat = predictions.stat()
    os.utime(predictions, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # same size, newer
    again = library.get("a")
    assert again is not first and again.grid(GridQuery()).total == first.grid(GridQuery()).total
    assert library.get("a") is again


def test_the_run_asked_for_least_recently_goes_first(root):
    library = RunLibrary(root, keep=2)
    a, b = library.get("a"), library.get("b")
    assert library.get("a") is a  # a is now the more recent of the two
    library.get("c")
    assert library.get("a") is a
    assert library.get("b") is not b  # evicted, so read again
