import json

import pytest

from tanglerag.errors import InputError
from tanglerag.eval.runs import GridQuery, RunLibrary, UnknownRun, find_runs, read_run
from tests.eval.run_folders import METHODS, write_run


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    write_run(root / "ramdocs" / "finished")
    return root


@pytest.fixture(scope="module")
def run(runs_root):
    return read_run("ramdocs/finished", runs_root / "ramdocs" / "finished")


def _ids(grid):
    return [row.id for row in grid.rows]


def test_the_grid_holds_every_question_and_method_with_its_score(run):
    grid = run.grid(GridQuery())
    assert grid.methods == METHODS and grid.metrics[0] == "em" and grid.total == 4
    assert grid.query.metric == "em" and (grid.query.a, grid.query.b) == ("concat", "pruning")
    verdicts = [(row.cells["concat"].right, row.cells["pruning"].right) for row in grid.rows]
    assert verdicts == [(True, False), (False, True), (True, True), (False, False)]
    assert grid.rows[0].cells["pruning"].answer == "1,647" and grid.rows[0].gold == ["3,559 people"]
    assert grid.means == {"concat": 0.5, "pruning": 0.5}
    assert grid.tangles == {"noise": 4, "misinformation": 1}
    assert grid.run.finished and grid.run.dataset == "ramdocs-sample"


def test_filters_pick_wrong_answers_one_method_beating_another_and_a_tangle_kind(run):
    assert _ids(run.grid(GridQuery(show="wrong"))) == ["ramdocs-0001", "ramdocs-0003"]
    assert _ids(run.grid(GridQuery(show="wrong", a="pruning"))) == ["ramdocs-0000", "ramdocs-0003"]
    assert _ids(run.grid(GridQuery(show="a-beats-b"))) == ["ramdocs-0000"]
    assert _ids(run.grid(GridQuery(show="a-beats-b", a="pruning", b="concat"))) == ["ramdocs-0001"]
    assert _ids(run.grid(GridQuery(show="disagree"))) == ["ramdocs-0000", "ramdocs-0001"]
    only = run.grid(GridQuery(tangle="misinformation"))
    assert _ids(only) == ["ramdocs-0002"] and only.means == {"concat": 1.0, "pruning": 1.0}
    assert _ids(run.grid(GridQuery(tangle="untangled"))) == []
    assert _ids(run.grid(GridQuery(show="wrong", tangle="misinformation"))) == []


def test_a_continuous_score_is_judged_against_right_at(run):
    loose = run.grid(GridQuery(metric="f1", right_at=0.0))
    assert all(cell.right for row in loose.rows for cell in row.cells.values())
    assert loose.query.metric == "f1"


def test_names_that_are_not_in_the_run_are_refused_with_what_it_has(run):
    with pytest.raises(InputError, match="metric 'rouge_l' is not in run 'ramdocs/finished'; it has em, f1"):
        run.grid(GridQuery(metric="rouge_l"))
    with pytest.raises(InputError, match="method 'corg' is not in run"):
        run.grid(GridQuery(b="corg"))
    with pytest.raises(InputError, match="compares two different methods"):
        run.grid(GridQuery(show="a-beats-b", a="concat", b="concat"))
    with pytest.raises(UnknownRun, match="no question 'nope'"):
        run.question("nope")


def test_a_question_holds_every_method_with_its_passages_and_trace(run):
    answers = run.question("ramdocs-0002")
    assert list(answers) == METHODS
    pruning = answers["pruning"]
    assert pruning.tangles == ["misinformation", "noise"] and len(pruning.passages) == 3
    assert pruning.passages[0].passage.metadata["type"] in {"correct", "misinfo", "noise"}
    assert pruning.trace.calls and "rule out each one" in pruning.trace.calls[0].messages[0].content


def test_a_run_still_being_written_is_read_from_its_checkpoint_without_touching_it(tmp_path):
    folder = write_run(tmp_path / "live", finished=False)
    checkpoint = folder / "checkpoint.jsonl"
    with checkpoint.open("a") as fh:
        fh.write('{"id": "ramdocs-0004", "predic')  # a line the run is writing right now
    before = checkpoint.read_bytes()
    live = read_run("live", folder)
    assert not live.info.finished and live.grid(GridQuery()).total == 4
    assert checkpoint.read_bytes() == before


def test_a_run_stopped_before_its_first_question_has_nothing_to_read(tmp_path):
    folder = tmp_path / "stopped"
    folder.mkdir()
    (folder / "run.json").write_text("{}")  # what `eval --out` writes before it answers anything
    with pytest.raises(UnknownRun, match="has no answered question yet"):
        read_run("stopped", folder)


def test_runs_from_before_tangles_and_passages_were_kept_get_them_from_their_dataset(tmp_path):
    folder = write_run(tmp_path / "old")
    rows = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    (folder / "predictions.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in row.items() if k not in {"tangles", "passages"}}) + "\n" for row in rows))
    old = read_run("old", folder)
    assert old.grid(GridQuery(tangle="misinformation")).total == 4
    assert _ids(old.grid(GridQuery(tangle="misinformation"))) == ["ramdocs-0002"]
    shown = old.question("ramdocs-0002")["concat"].passage_ids
    assert all(old.dataset_passages[pid].text for pid in shown)


def test_a_damaged_prediction_line_is_named(tmp_path):
    folder = write_run(tmp_path / "damaged")
    with (folder / "predictions.jsonl").open("a") as fh:
        fh.write('{"id": 3}\n')
    with pytest.raises(InputError, match=r"predictions.jsonl line 9 is not a prediction"):
        read_run("damaged", folder)


def test_the_library_finds_runs_by_relative_name_and_rereads_a_changed_run(runs_root, tmp_path):
    (runs_root / ".hidden" / "x").mkdir(parents=True, exist_ok=True)
    (runs_root / ".hidden" / "x" / "predictions.jsonl").write_text("")
    assert list(find_runs(runs_root)) == ["ramdocs/finished"]
    single = write_run(tmp_path / "only-run")
    assert list(find_runs(single)) == ["only-run"]  # the folder given is itself a run

    library = RunLibrary(tmp_path)
    assert [info.name for info in library.infos()] == ["only-run"]
    first = library.get("only-run")
    assert library.get("only-run") is first  # read once
    predictions = single / "predictions.jsonl"
    predictions.write_text("".join(predictions.read_text().splitlines(keepends=True)[:2]))
    assert library.get("only-run").grid(GridQuery()).total == 2
    with pytest.raises(UnknownRun, match="no run named 'nope'"):
        library.get("nope")
    with pytest.raises(InputError, match="is not a folder"):
        find_runs(tmp_path / "missing")


def test_a_run_is_found_by_name_only_where_the_listing_would_find_it(runs_root, tmp_path):
    from tanglerag.eval.runs import run_folder

    assert run_folder(runs_root, "ramdocs/finished") == runs_root / "ramdocs" / "finished"
    for name in ("ramdocs", "../runs0/ramdocs/finished", ".hidden/x", "/etc", "ramdocs/../ramdocs/finished", ""):
        assert run_folder(runs_root, name) is None, name
    (tmp_path / "linked").symlink_to(runs_root / "ramdocs", target_is_directory=True)
    assert run_folder(tmp_path, "linked/finished") is None and "linked/finished" not in find_runs(tmp_path)
    single = write_run(tmp_path / "solo")
    assert run_folder(single, "solo") == single and list(find_runs(single)) == ["solo"]
