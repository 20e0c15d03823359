"""The run browser (``serve --runs DIR``, page ``/runs``) in a real browser: the grid of questions x methods,
its filters, and a question's traces side by side. The run is a real eval of the RAMDocs sample with a
canned model (tests/eval/run_folders.py tells which method gets which question right)."""

from __future__ import annotations

import json

import pytest

from tests.eval.run_folders import write_run
from tests.service.browsing import BROWSER_GROUP, needs_chromium, serving, shot
from tests.service.conftest import make_runtime

pytestmark = [needs_chromium, BROWSER_GROUP]


@pytest.fixture(scope="module")
def runs_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    write_run(root / "ramdocs-sample" / "concat-vs-pruning")
    with serving(make_runtime(tmp_path_factory.mktemp("rt")), runs_dir=root) as url:
        yield url


@pytest.fixture(scope="module")
def placed_server(tmp_path_factory):
    """The same run, its passages read from files: concat's first two for the first question carry a place."""
    root = tmp_path_factory.mktemp("placed")
    predictions = write_run(root / "files" / "concat-vs-pruning") / "predictions.jsonl"
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    first = next(line for line in lines if line["id"] == "ramdocs-0000" and line["method"] == "concat")
    first["passages"][0]["passage"]["metadata"] |= {"path": "reports/policy-2024.pdf", "page": 12,
                                                    "section": ["Scope", "Limits"]}
    first["passages"][1]["passage"]["metadata"] |= {"path": "notes.md", "section": ["Broken Bow"]}
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with serving(make_runtime(tmp_path_factory.mktemp("rt")), runs_dir=root) as url:
        yield url


@pytest.fixture
def page(browser, runs_server):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{runs_server}/runs")
    page.wait_for_selector("#grid tbody tr")
    yield page
    page.close()


def rows(page) -> list[str]:
    return page.locator("#grid tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")


def shows(page, ids: list[str]) -> None:
    """Waits until the grid shows exactly these questions (each filter change fetches the grid again)."""
    page.wait_for_function("ids => [...document.querySelectorAll('#grid tbody tr')].map(r => r.dataset.id).join() "
                           "=== ids.join()", arg=ids)


def verdict(page, qid: str, method: str) -> str:
    return page.locator(f"#grid tr[data-id='{qid}'] td.cell[data-method='{method}']").get_attribute("class")


def test_the_grid_scores_every_question_and_method(page):
    assert rows(page) == ["ramdocs-0000", "ramdocs-0001", "ramdocs-0002", "ramdocs-0003"]
    assert "right" in verdict(page, "ramdocs-0000", "concat") and "wrong" in verdict(page, "ramdocs-0000", "pruning")
    assert page.locator("#grid tfoot .num").all_inner_texts() == ["0.500", "0.500"]
    assert page.locator("#grid tr[data-id='ramdocs-0002'] .chip").all_inner_texts() == ["misinformation", "noise"]
    shot(page, "runs-grid")


def test_filters_narrow_the_grid_and_survive_a_reload(page):
    page.select_option("#show", "wrong")
    shows(page, ["ramdocs-0001", "ramdocs-0003"])
    page.select_option("#show", "a-beats-b")
    page.select_option("#method-a", "pruning")
    page.select_option("#method-b", "concat")
    shows(page, ["ramdocs-0001"])
    assert "1 of 4 questions" in page.inner_text("#status")
    page.select_option("#show", "all")
    page.select_option("#tangle", "misinformation")
    shows(page, ["ramdocs-0002"])
    page.reload()
    page.wait_for_selector("#grid tbody tr")
    assert rows(page) == ["ramdocs-0002"] and page.input_value("#method-a") == "pruning"


def test_a_question_opens_both_methods_traces_side_by_side(page):
    page.locator("#grid tr[data-id='ramdocs-0002'] .qopen").click()
    page.wait_for_selector("#col-1 .answer")
    columns = page.locator("#results .column")
    assert [columns.nth(i).get_attribute("data-method") for i in range(2)] == ["concat", "pruning"]
    assert page.inner_text("#col-0 .answer").startswith("Mahesh Bhatt")
    assert "em 1" in page.inner_text("#col-0 h2") and page.locator("#col-1 .calls").count() == 1
    assert page.locator("#col-0 .passage .label").count() == 3  # RAMDocs' own correct / misinfo / noise
    page.locator("#col-0 .answer .cite").first.click()
    assert page.locator("#col-0 .passage.highlight").count() == 1
    shot(page, "runs-compare")
    page.reload()  # the permalink reopens the question
    page.wait_for_selector("#col-1 .answer")
    assert page.inner_text("#question-view h2").startswith("Who are the directors")


def test_a_score_opens_that_method_beside_the_other(page):
    page.locator("#grid tr[data-id='ramdocs-0000'] td.cell[data-method='pruning'] .score").click()
    page.wait_for_selector("#col-1 .answer")
    assert page.get_attribute("#col-0", "data-method") == "pruning"
    assert page.get_attribute("#col-1", "data-method") == "concat"
    assert page.locator("#col-0 .calls details.call").count() == 1


def test_an_older_grid_request_failing_late_does_not_overwrite_the_newest_grid(page):
    """Filters change faster than grids come back: a slow request's error that arrives after a newer grid is stale,
    like its grid would be, so the status stays the newest grid's."""
    held = []
    page.route("**/grid?*", lambda route: held.append(route) if "show=wrong" in route.request.url
               else route.continue_())
    page.select_option("#show", "wrong")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('reading')")
    page.select_option("#show", "all")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('4 of 4')")
    assert len(held) == 1
    with page.expect_response("**/grid?*show=wrong*"):
        held[0].fulfill(status=422, json={"error": "a stale complaint"})
    page.evaluate("() => new Promise(requestAnimationFrame)")  # the page's handler has run once the frame is drawn
    assert page.inner_text("#status").startswith("4 of 4") and "error" not in page.get_attribute("#status", "class")
    assert rows(page) == ["ramdocs-0000", "ramdocs-0001", "ramdocs-0002", "ramdocs-0003"]


def test_a_passage_read_from_a_file_shows_its_page_and_section(browser, placed_server):
    """Issue 51: the run browser lists a question's passages with where each stands in its file, as ask does."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{placed_server}/runs")
    page.wait_for_selector("#grid tbody tr")
    page.locator("#grid tr[data-id='ramdocs-0000'] td.cell[data-method='concat'] .score").click()
    page.wait_for_selector("#col-0 .passage")
    about = page.locator("#col-0 .passage .pid").all_inner_texts()
    assert about[0].startswith("[1] ramdocs-0000-d0 · ") and about[0].endswith(" · policy-2024.pdf p. 12, §Scope > Limits")
    assert about[1].endswith(" · notes.md §Broken Bow")
    assert not any("§" in line or " p. " in line for line in about[2:])  # no place where the run kept none
    assert page.locator("#col-1 .passage .pid").first.inner_text().count("§") == 0  # pruning's passages: as before
    shot(page, "runs-places")
    page.close()
