"""The web inspector in a real browser: Playwright driving Debian's chromium (no browser download offline)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from tanglerag.testing import CannedBackend
from tanglerag.types import Passage
from tests.service.conftest import make_runtime

CHROMIUM = os.environ.get("TANGLERAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium found: install Debian's 'chromium' package "
                                                          "(scripts/test.sh does) or set TANGLERAG_CHROMIUM")
SHOTS = os.environ.get("TANGLERAG_SCREENSHOTS")  # a folder: save a screenshot of each view there

TANGLED = [
    Passage(id="paris-fr", title="Paris", text="Paris is the capital of France, on the Seine."),
    Passage(id="paris-tx", title="Paris, Texas", text="Paris is a city in Lamar County, Texas, United States."),
    Passage(id="paris-fr-2", title="Paris", text="Paris, France's capital, is its largest city."),
]


def tangled_reply(messages) -> str:
    """Reads the numbered contexts like a careful model: the Texas one is a different Paris, the others agree."""
    prompt = messages[-1].content
    texas = {n for n, text in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE) if "Texas" in text}
    numbers = sorted(set(re.findall(r"^\[(\d+)\]", prompt, re.MULTILINE)))
    if others := re.search(r"to each of the contexts (.*?): one line", prompt):
        focal = re.search(r"from context \[(\d+)\]", prompt).group(1)
        return "\n".join(f"[{n}] - {'distracting' if (n in texas) != (focal in texas) else 'duplicated'}"
                         for n in re.findall(r"\d+", others.group(1)))
    france = [n for n in numbers if n not in texas]
    if prompt.rstrip().endswith("Answers:"):
        lines = [f"capital of France (Paris, France) {''.join(f'[{n}]' for n in france)}"] if france else []
        lines += [f"city in Lamar County (Paris, Texas) [{n}]" for n in sorted(texas)]
        return "\n".join(lines) or "unknown"
    return f"Paris is the capital of France [{france[0] if france else 1}]"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import uvicorn

    from tanglerag.service.app import create_app

    tmp = tmp_path_factory.mktemp("inspector")
    runtime = make_runtime(tmp, with_index=False, backend=CannedBackend(responder=tangled_reply))
    from tanglerag.index.passage_index import store_passages

    store_passages(runtime.index_dir, TANGLED, runtime.embedder, runtime.settings.index)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(runtime), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    page.wait_for_selector("#method-a option[value='corg']", state="attached")
    yield page
    page.close()


def ask(page, question: str, method: str, compare: str = "") -> None:
    page.fill("#question", question)
    page.select_option("#method-a", method)
    page.select_option("#method-b", compare)
    page.keyboard.press("Enter")  # keyboard-usable: Enter in the question field submits
    page.wait_for_selector("#status:text('done')")


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_ask_and_click_a_citation(page):
    ask(page, "What is Paris?", "concat")
    answer = page.locator("#col-0 .answer")
    assert answer.inner_text().startswith("Paris")
    assert page.locator("#col-0 .cost table tr").count() >= 3  # header, a stage, total
    page.locator("#col-0 .answer .cite").first.click()
    highlighted = page.locator("#col-0 .passage.highlight")
    assert highlighted.count() == 1 and highlighted.get_attribute("id") == "c0-p1"
    assert page.evaluate("document.activeElement.id") == "c0-p1"
    shot(page, "inspector-answer")


def test_open_the_context_graph(page):
    ask(page, "What is Paris?", "corg")
    graph = page.locator("#col-0 details[data-kind='corg_graph']")
    graph.locator("summary").click()
    assert graph.locator("svg circle").count() == 3
    assert graph.locator("svg line.edge.duplicated").count() >= 1
    assert graph.locator("svg line.edge.distracting").count() >= 1
    assert "counterfactual" in graph.locator(".legend").inner_text()
    page.locator("#col-0 details[data-kind='groups'] summary").click()
    assert "duplicate" in page.locator("#col-0 details[data-kind='groups']").inner_text()
    assert page.locator("#col-0 .parts li").count() == 2
    shot(page, "inspector-graph")


def test_compare_two_methods_side_by_side(page):
    ask(page, "What is Paris?", "concat", compare="post-fusion")
    columns = page.locator("section.column")
    assert columns.count() == 2
    assert columns.nth(0).get_attribute("data-method") == "concat"
    assert columns.nth(1).get_attribute("data-method") == "post-fusion"
    votes = page.locator("#col-1 details[data-kind='answer_pool']")
    votes.locator("summary").click()
    assert "Paris" in votes.locator("table.votes").inner_text()
    assert page.locator("#col-0 .answer").is_visible() and page.locator("#col-1 .answer").is_visible()
    shot(page, "inspector-compare")


def test_errors_from_the_service_are_shown(page):
    page.fill("#question", "x" * 10)
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(status=429, content_type="application/json",
                                                                   body='{"error": "busy: 1 running; retry later"}'))
    page.select_option("#method-a", "concat")
    page.click("#ask-button")
    page.wait_for_selector("#col-0 .error")
    assert "429: busy" in page.locator("#col-0 .error").inner_text()
    assert "busy" in page.locator("#status.error").inner_text()
    assert page.locator("#ask-button").is_enabled()
