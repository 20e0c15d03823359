"""The inspector's "Search only" button in a real browser (issue 63, item 1): the passages the question retrieves,
listed as an answer lists them, with their place in the file, and no model call."""

from __future__ import annotations

import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.types import Passage
from tests.service.browsing import BROWSER_GROUP, needs_chromium, serving, shot
from tests.service.conftest import make_runtime

pytestmark = [needs_chromium, BROWSER_GROUP]

PLACED = [Passage(id="guide.pdf#0", title="Guide", text="Paris is the capital of France.",
                  metadata={"path": "guide.pdf", "page": 4, "date": "2024-03-01", "source": "atlas.org"}),
          Passage(id="tea", title="Tea", text="Green tea is steeped at eighty degrees.")]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    runtime = make_runtime(tmp_path_factory.mktemp("search"), with_index=False)
    store_passages(runtime.index_dir, PLACED, runtime.embedder, runtime.settings.index)
    with serving(runtime) as url:
        yield url, runtime


def test_search_only_lists_the_passages_with_their_place_and_calls_no_model(browser, served):
    url, runtime = served
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(url)
    page.wait_for_selector("#method-a option[value='concat']", state="attached")
    page.fill("#question", "Paris is the capital of France.")
    page.click("#search-button")
    page.wait_for_selector("#status:text('done')")
    passages = page.locator("#col-0 .passage")
    assert passages.count() == 2 and "no LLM call" in page.locator("#col-0 h2").inner_text()
    first = passages.first.inner_text()
    assert first.startswith("[1] guide.pdf#0 · ") and "guide.pdf p. 4 · 2024-03-01 · atlas.org" in first
    assert "Guide: Paris is the capital of France." in first
    page.fill("#top-k", "200")  # past what a request may ask: the service's error is shown, not a blank page
    page.click("#search-button")
    page.wait_for_selector("#status.error")
    assert page.locator("#status").inner_text().startswith("422: top_k")
    shot(page, "inspector-search")
    page.close()
    assert not runtime.llm.backend.requests
