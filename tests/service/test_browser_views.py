"""The inspector and the run browser in a real browser (issue 52, item 6): COrg's graph names the passages its circles
number, replies the graph could not read are said to be unreadable (not "no relations found"), a stage entered twice
is one timeline row, the calls that finished before Stop can still be opened, and a running run's grid refreshes."""

from __future__ import annotations

import time

import pytest

from tests.service.browsing import BROWSER_GROUP, needs_chromium, serving, shot
from tests.service.test_inspector_browser import _tangled_runtime, ask, tangled_reply

pytestmark = [needs_chromium, BROWSER_GROUP]


def unreadable_relations(messages) -> str:
    """Answers like the careful model, except that every relation reply is garbage."""
    if "to each of the contexts" in messages[-1].content:
        return "I think they are all about Paris, more or less."
    return tangled_reply(messages)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    with serving(_tangled_runtime(tmp_path_factory.mktemp("graph"), tangled_reply)) as readable, \
            serving(_tangled_runtime(tmp_path_factory.mktemp("unreadable"), unreadable_relations)) as unreadable:
        yield readable, unreadable


def _graph(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector("#method-a option[value='corg']", state="attached")
    ask(page, "What is Paris?", "corg")
    graph = page.locator("#col-0 details[data-kind='corg_graph']")
    graph.locator("summary").click()
    return page, graph


def test_the_graph_names_the_passage_each_circle_numbers(browser, servers):
    page, graph = _graph(browser, servers[0])
    key = graph.locator(".graph-key").inner_text()
    assert "[1] " in key and all(pid in key for pid in ("paris-fr", "paris-tx", "paris-fr-2"))
    assert graph.locator(".unread").count() == 0 and "no relation" not in graph.inner_text()
    page.close()


def test_unreadable_replies_are_not_shown_as_no_relations(browser, servers):
    page, graph = _graph(browser, servers[1])
    text = graph.inner_text()
    assert "no relations found" not in text and "no relation could be read" in text
    assert "3 pairs could not be read from the LLM's replies" in graph.locator(".unread").inner_text()
    assert "3 of 3 pairs judged by the LLM, 3 pairs unreadable" in text
    shot(page, "inspector-graph-unreadable")
    page.close()


def test_a_stage_entered_twice_is_one_timeline_row(browser, servers):
    page, _ = _graph(browser, servers[0])  # COrg enters rerank twice: the reranker, then the plural question
    stages = page.locator("#col-0 .timeline li").evaluate_all("rows => rows.map(r => r.dataset.stage)")
    assert stages.count("rerank") == 1 and len(stages) == len(set(stages))
    assert page.locator("#col-0 .timeline li.running").count() == 0
    page.close()


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    def slow_reply(messages) -> str:
        time.sleep(3.0)  # wide enough for Stop to land mid-run on a loaded machine (0.5 s was not)
        return tangled_reply(messages)

    with serving(_tangled_runtime(tmp_path_factory.mktemp("slow-graph"), slow_reply)) as url:
        yield url


def test_the_calls_made_before_stop_can_still_be_opened(browser, slow):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(slow)
    page.wait_for_selector("#method-a option[value='corg']", state="attached")
    page.fill("#question", "What is Paris, after all?")
    page.select_option("#method-a", "corg")
    page.click("#ask-button")
    page.wait_for_selector("#col-0 .timeline .calls:text('1 call')")  # a call finished; more are to come
    page.click("#stop-button")
    page.wait_for_selector("#status:text('stopped')")
    calls = page.locator("#col-0 details.calls")
    assert calls.count() == 1 and calls.locator("details.call").count() >= 1
    calls.locator("> summary").click()
    first = calls.locator("details.call").first
    first.locator("summary").click()
    assert "Paris" in first.locator("pre:not(.reply)").last.inner_text() and first.locator("pre.reply").count() == 1
    page.close()


def test_the_run_browser_reads_a_running_run_again_until_it_finishes(browser, tmp_path):
    from tests.eval.run_folders import write_run
    from tests.service.conftest import make_runtime

    run = write_run(tmp_path / "runs" / "ramdocs-sample" / "going", finished=False)
    checkpoint = run / "checkpoint.jsonl"
    lines = checkpoint.read_text().splitlines(keepends=True)
    checkpoint.write_text("".join(lines[:-1]))  # one question still to come
    with serving(make_runtime(tmp_path / "rt"), runs_dir=tmp_path / "runs") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/runs")
        page.wait_for_selector("#grid tbody tr")
        before = page.locator("#grid tbody tr").count()
        assert "still going" in page.locator("#status").inner_text()
        checkpoint.write_text("".join(lines))  # the run answers its last question
        page.wait_for_function("n => document.querySelectorAll('#grid tbody tr').length === n", arg=before + 1,
                               timeout=10_000)
        page.close()
