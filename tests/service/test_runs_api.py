"""The run browser's API: ``serve --runs DIR`` lists the eval runs under DIR, filters one as a grid and
returns every method's answer and trace for a question."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tanglerag.service.app import create_app
from tanglerag.service.auth import ApiKeys
from tests.eval.run_folders import METHODS, write_run
from tests.service.conftest import ADMIN, ALICE, bearer, make_runtime


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    write_run(root / "sample" / "concat-vs-pruning")
    write_run(root / "live", finished=False)
    return root


@pytest.fixture
def browsing(tmp_path, runs_root):
    with TestClient(create_app(make_runtime(tmp_path), runs_dir=runs_root)) as c:
        yield c


RUN = "/v1/runs/sample/concat-vs-pruning"


def test_runs_are_listed_finished_or_not(browsing):
    assert browsing.get("/healthz").json()["runs"] is True
    assert browsing.get("/v1/runs").json() == [
        {"name": "live", "dataset": "ramdocs-sample", "finished": False},
        {"name": "sample/concat-vs-pruning", "dataset": "ramdocs-sample", "finished": True}]


def test_the_grid_is_filtered_by_the_query(browsing):
    grid = browsing.get(f"{RUN}/grid").json()
    assert grid["methods"] == METHODS and grid["total"] == len(grid["rows"]) == 4
    assert grid["rows"][0]["cells"]["concat"] == {"answer": "3,559 people [1]", "score": 1.0, "right": True}
    beats = browsing.get(f"{RUN}/grid", params={"show": "a-beats-b", "a": "pruning", "b": "concat"}).json()
    assert [r["id"] for r in beats["rows"]] == ["ramdocs-0001"] and beats["query"]["show"] == "a-beats-b"
    tangled = browsing.get(f"{RUN}/grid", params={"tangle": "misinformation", "metric": "f1"}).json()
    assert [r["id"] for r in tangled["rows"]] == ["ramdocs-0002"] and tangled["means"]["concat"] == 1.0
    assert browsing.get("/v1/runs/live/grid").json()["run"]["finished"] is False


def test_a_question_comes_back_as_answers_the_inspector_can_show(browsing):
    found = browsing.get(f"{RUN}/question", params={"id": "ramdocs-0002"}).json()
    assert found["question"].startswith("Who are the directors") and found["tangles"] == ["misinformation", "noise"]
    concat, pruning = found["answers"]
    assert (concat["method"], pruning["method"]) == tuple(METHODS)
    assert concat["metrics"]["em"] == 1.0 and concat["citations"] == [concat["passages"][0]["id"]]
    assert {p["label"] for p in concat["passages"]} <= {"correct", "misinfo", "noise"}
    assert all(p["text"] and isinstance(p["score"], float) for p in concat["passages"])
    assert pruning["trace"]["calls"][0]["replies"][0].endswith("Answer: Mahesh Bhatt")
    assert set(concat["usage_by_stage"]) == {"retrieve", "generate"}


@pytest.mark.parametrize(("path", "params", "status", "message"), [
    ("/v1/runs/nope/grid", {}, 404, "no run named 'nope'"),
    (f"{RUN}/question", {"id": "nope"}, 404, "has no question 'nope'"),
    (f"{RUN}/grid", {"metric": "rouge_l"}, 422, "metric 'rouge_l' is not in run"),
    (f"{RUN}/grid", {"right_at": "2"}, 422, "right_at"),
    (f"{RUN}/grid", {"show": "best"}, 422, "show"),
])
def test_refusals_say_what_is_wrong(browsing, path, params, status, message):
    r = browsing.get(path, params=params)
    assert r.status_code == status and message in r.json()["error"]


def test_a_damaged_run_is_a_conflict_naming_its_line(tmp_path):
    folder = write_run(tmp_path / "runs" / "broken")
    with (folder / "predictions.jsonl").open("a") as fh:
        fh.write("not json\n")
    with TestClient(create_app(make_runtime(tmp_path), runs_dir=tmp_path / "runs")) as c:
        r = c.get("/v1/runs/broken/grid")
    assert r.status_code == 409 and "predictions.jsonl line 9 is not a prediction" in r.json()["error"]


def test_without_a_runs_folder_the_routes_say_how_to_get_one(client):
    r = client.get("/v1/runs")
    assert r.status_code == 404 and "tanglerag serve --runs DIR" in r.json()["error"]
    assert client.get("/healthz").json()["runs"] is False


def test_runs_need_a_key_when_keys_are_on(tmp_path, runs_root):
    keys = ApiKeys.load(env=f"{ADMIN},{ALICE}=alice")
    with TestClient(create_app(make_runtime(tmp_path), keys, runs_dir=runs_root)) as c:
        assert c.get("/v1/runs").status_code == 401
        assert c.get("/v1/runs", headers=bearer(ALICE)).status_code == 200
        assert c.get("/runs").status_code == 200  # the page itself holds no data
