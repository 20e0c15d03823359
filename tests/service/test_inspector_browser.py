"""The web inspector in a real browser: Playwright driving Debian's chromium (no browser download offline)."""

from __future__ import annotations

import re
import time

import pytest

from tanglerag.testing import CannedBackend
from tanglerag.types import Passage
from tests.service.browsing import BROWSER_GROUP, needs_chromium, serving, shot
from tests.service.conftest import make_runtime

pytestmark = [needs_chromium, BROWSER_GROUP]

TANGLED = [
    Passage(id="paris-fr", title="Paris", text="Paris is the capital of France, on the Seine."),
    Passage(id="paris-tx", title="Paris, Texas", text="Paris is a city in Lamar County, Texas, United States."),
    Passage(id="paris-fr-2", title="Paris", text="Paris, France's capital, is its largest city."),
]


def tangled_reply(messages) -> str:
    """Reads the numbered contexts like a careful model: the Texas one is a different Paris, the others agree."""
    prompt = messages[-1].content
    if messages[0].content.startswith("You are one of several agents"):  # MADAM-RAG: each agent, its one document
        found = "a city in Lamar County" if "Texas" in prompt.split("Question:")[0] else "capital of France"
        return f"Answer: {found}\nReason: my document says so"
    if messages[0].content.startswith("You read the answers of agents"):
        texas = [n for n, answer in re.findall(r"^Agent (\d+): (.*)$", prompt, re.MULTILINE) if "Lamar" in answer]
        france = [n for n, answer in re.findall(r"^Agent (\d+): (.*)$", prompt, re.MULTILINE) if "France" in answer]
        return (f"capital of France | Paris, France | {''.join(f'[{n}]' for n in france)}\n"
                f"a city in Lamar County | Paris, Texas | {''.join(f'[{n}]' for n in texas)}\n"
                "Summary: two places named Paris")
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


def _tangled_runtime(tmp, reply):
    from tanglerag.index.passage_index import store_passages

    runtime = make_runtime(tmp, with_index=False, backend=CannedBackend(responder=reply))
    store_passages(runtime.index_dir, TANGLED, runtime.embedder, runtime.settings.index)
    return runtime


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(_tangled_runtime(tmp_path_factory.mktemp("inspector"), tangled_reply)) as url:
        yield url


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory):
    """One model slot and 1 s per call: questions queue, and a stopped one has calls left to skip."""
    def slow_reply(messages) -> str:
        time.sleep(1.0)
        return tangled_reply(messages)

    with serving(_tangled_runtime(tmp_path_factory.mktemp("slow"), slow_reply)) as url:
        yield url


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
    assert "dashed: inferred" in graph.locator(".legend").inner_text()
    lines = graph.locator("svg line.edge")
    assert lines.count() == graph.locator("svg line.judged").count() + graph.locator("svg line.inferred").count()
    assert lines.count() <= 3  # one line per pair of contexts, though pairs are judged one way and mirrored
    page.locator("#col-0 details[data-kind='groups'] summary").click()
    assert "duplicate" in page.locator("#col-0 details[data-kind='groups']").inner_text()
    assert page.locator("#col-0 .parts li").count() == 2
    shot(page, "inspector-graph")


def test_conflicting_answers_view_says_what_lost_to_what(page):
    """corg.conflicts=support's step (the canned server runs COrg as published, so the step is rendered directly)."""
    step = {"kind": "corg_conflicts", "overruled": [{"answer": "film", "citations": ["d2"], "support": 1,
                                                     "kept_answer": "novel", "kept_support": 2}]}
    text = page.evaluate("step => renderStep(step, 0, {}).innerText", step)
    assert "Conflicting answers" in text and "film" in text and "1: d2" in text and "novel (2)" in text
    step["overruled"] = []
    assert "no answer contradicted" in page.evaluate("step => renderStep(step, 0, {}).innerText", step)


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


def test_madam_rag_beside_corg_shows_its_debate_as_rounds_by_agents(page):
    ask(page, "What is Paris?", "corg", compare="madam-rag")
    assert page.locator("section.column").nth(1).get_attribute("data-method") == "madam-rag"
    debate = page.locator("#col-1 details[data-kind='debate']")
    debate.locator("summary").click()
    table = debate.locator("table.debate")
    assert table.locator("tr").count() == 1 + 3 + 1  # rounds header, one row per agent, the aggregator
    assert "round 2" in table.inner_text() and "no agent moved" in table.inner_text()
    assert "Paris, Texas" in table.inner_text() and "Stopped: no agent changed" in debate.inner_text()
    assert page.locator("#col-1 .parts li").count() == 2 and page.locator("#col-0 .parts li").count() == 2
    shot(page, "inspector-madam")


def test_errors_from_the_service_are_shown(page):
    page.fill("#question", "x" * 10)
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(status=429, content_type="application/json",
                                                                   body='{"error": "busy: 1 running; retry later"}'))
    page.select_option("#method-a", "concat")
    page.click("#ask-button")
    page.wait_for_selector("#col-0 .error")
    assert page.locator("#col-0 p.error").inner_text() == "429: busy: 1 running; retry later"
    assert page.locator("#col-0 .state").inner_text() == "failed"
    assert "busy" in page.locator("#status.error").inner_text()
    assert page.locator("#ask-button").is_enabled()


def test_the_timeline_the_calls_and_what_cached_calls_first_cost(page):
    ask(page, "Where is Paris?", "corg")
    stages = page.locator("#col-0 .timeline li.ended")
    assert stages.count() >= 3 and re.fullmatch(r"\d+\.\d\ds", stages.first.locator(".took").inner_text())
    assert page.locator("#col-0 .timeline li.running").count() == 0
    assert "model seconds (original)" in page.locator("#col-0 .cost").inner_text()
    calls = page.locator("#col-0 details.calls")
    calls.locator("> summary").click()
    first = calls.locator("details.call").first
    first.locator("summary").click()
    assert "Paris" in first.locator("pre:not(.reply)").last.inner_text() and first.locator("pre.reply").count() == 1
    shot(page, "inspector-calls")
    ask(page, "Where is Paris?", "corg")  # the same question again: every call comes from the cache
    page.locator("#col-0 details.calls > summary").click()
    assert "cached (originally" in page.locator("#col-0 details.call summary").first.inner_text()


def test_compared_methods_run_at_once_and_a_permalink_asks_again(browser, page, server):
    page.add_init_script("""
        window.inFlight = 0; window.mostInFlight = 0;
        const original = window.fetch;
        window.fetch = async (...args) => {
          const asking = String(args[0]).startsWith("/v1/ask");
          if (asking) window.mostInFlight = Math.max(window.mostInFlight, ++window.inFlight);
          try { return await original(...args); } finally { if (asking) window.inFlight--; }
        };""")
    page.reload()
    page.wait_for_selector("#method-a option[value='corg']", state="attached")
    ask(page, "What is Paris?", "concat", compare="post-fusion")
    assert page.evaluate("window.mostInFlight") == 2
    votes = page.locator("#col-1 details[data-kind='answer_pool']")
    votes.locator("summary").click()
    assert "[" not in votes.locator("table.votes tr td:first-child").first.inner_text()
    assert page.locator("#col-0 a.export[download]").get_attribute("href").startswith("blob:")
    link = page.url
    assert "q=What+is+Paris" in link and "m=concat%2Cpost-fusion" in link
    again = browser.new_page()
    again.goto(link)
    again.wait_for_selector("#status:text('done')")
    assert again.locator("section.column").count() == 2 and again.locator("#col-1 .answer").is_visible()
    again.close()


def _asked(browser, url: str, question: str, method: str, compare: str = ""):
    """A new page on ``url`` that has just asked ``question`` (``ask`` waits for the answers; this does not)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector(f"#method-a option[value='{method}']", state="attached")
    page.fill("#question", question)
    page.select_option("#method-a", method)
    page.select_option("#method-b", compare)
    page.click("#ask-button")
    return page


def test_a_queued_question_then_stop_frees_the_slot(browser, slow_server):
    page = _asked(browser, slow_server, "What is Paris, truly?", "corg", "diva")
    page.wait_for_selector(".timeline li")
    states = [page.locator(f"#col-{i} .state").inner_text() for i in (0, 1)]
    assert sorted(s.split()[0] for s in states) == ["queued", "running"], states  # one model slot
    shot(page, "inspector-running")
    assert page.locator("#ask-button").is_disabled() and page.locator("#stop-button").is_enabled()
    page.click("#stop-button")
    page.wait_for_selector("#status:text('stopped')")
    assert [page.locator(f"#col-{i} .state").inner_text() for i in (0, 1)] == ["stopped", "stopped"]
    deadline = time.monotonic() + 10
    while not re.search(r"^tanglerag_abandoned_questions_total [1-9]", page.request.get(f"{slow_server}/metrics").text(),
                        re.MULTILINE):
        assert time.monotonic() < deadline, "the stopped question was not counted as abandoned"
        time.sleep(0.1)
    deadline = time.monotonic() + 10  # how soon is measured by benchmarks/service_disconnect.py, not here
    while (health := page.request.get(f"{slow_server}/healthz").json())["running"] or health["waiting"]:
        assert time.monotonic() < deadline, f"the slot was not freed: {health}"
        time.sleep(0.05)
    page.close()


def test_no_passages_no_empty_heading_and_a_narrow_window_does_not_scroll_sideways(browser, server):
    page = browser.new_page(viewport={"width": 400, "height": 800})
    page.goto(server)
    page.wait_for_selector("#method-a option[value='corg']", state="attached")
    ask(page, "What is Paris?", "closed-book")
    column = page.locator("#col-0")
    assert column.locator("h3:text('Passages')").count() == 0 and "without retrieval" in column.inner_text()
    assert column.locator(".answer .cite-missing").inner_text() == "[1]"  # cited, but it was given no passage
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    enabled = page.locator("#ask-button").evaluate("b => getComputedStyle(b).backgroundColor")
    assert page.locator("#stop-button").evaluate("b => getComputedStyle(b).backgroundColor") != enabled
    page.close()


def test_the_conflicts_panel_lists_each_report_with_its_sides_and_rule(page):
    """A canned answer with a report (concat + conflicts.report on the conflicting corpus), one side's answer made
    to look like markup: the panel shows it as text."""
    import json

    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.methods.base import make_method
    from tanglerag.service.schemas import AskResponse
    from tanglerag.settings import Settings
    from tanglerag.types import Question
    from tests.conflicting import JORDAN, QUESTION, conflicting_backend
    from tests.conftest import as_retrieved, resources

    settings = Settings.load(overrides=["conflicts.report=true"])
    method = make_method("concat", resources(LLM(conflicting_backend(), CallCache(None)), settings))
    body = AskResponse.from_answer(method.answer(Question(text=QUESTION), as_retrieved(JORDAN)), trace=True)
    answer = body.model_dump(mode="json")
    answer["conflicts"][0]["sides"][1]["answer"] = "<img src=x onerror=alert(1)>"
    answer["trace"]["steps"][0]["documents"] = {"fan": {"source": "fan site", "date": "2021-05-01"}}
    answer["trace"]["steps"][0]["kinds"] = {"fan": "correction"}
    answer["trace"]["steps"][0]["trust"] = [("inbox/fan.md: declared authority 'official' ignored (outside the trusted "
                                            "paths) <b>")]
    answer["trace"]["steps"][0]["claims"][0]["dropped_by"] = "answer-type: the question asks for time"
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {json.dumps(answer)}\n\n"))
    ask(page, QUESTION, "concat")
    panel = page.locator("#col-0 section.conflicts")
    assert panel.locator("h3").inner_text() == "Conflicts"
    assert panel.locator(".report p").first.inner_text() == "misinformation about Michael Jordan, the basketball player"
    sides = panel.locator(".sides li")
    assert sides.count() == 2 and sides.nth(0).get_attribute("class") == "verdict-kept"
    assert sides.nth(0).inner_text() == "kept 1963 [1] [2] · 2 witnesses"
    assert sides.nth(1).inner_text() == ("rejected <img src=x onerror=alert(1)> [3] (fan site, 2021-05-01) · 1 witness"
                                         " · fewer independent sources (1 against 2)")
    assert panel.locator("img").count() == 0  # a document's words are text, never markup
    assert panel.locator(".rule").inner_text() == "rule: witnesses 2 vs 1"
    sides.nth(1).locator(".cite").click()
    assert page.locator("#col-0 .passage.highlight").get_attribute("id") == "c0-p3"
    view = page.locator("#col-0 details[data-kind='conflicts'] table.sides tr")  # the step's own view
    assert [view.nth(i).locator("td").last.text_content() for i in (1, 2)] == [
        "", "fewer independent sources (1 against 2)"]  # why each side was set aside; none for the kept one
    step_view = page.locator("#col-0 details[data-kind='conflicts']")
    assert step_view.locator(".kinds").text_content() == "What the documents are: [3] correction; "
    assert step_view.locator(".trust li").text_content().endswith("(outside the trusted paths) <b>")  # as text
    assert "(answer-type: the question asks for time)" in step_view.locator("table.claims").text_content()
    shot(page, "inspector-conflicts")


def test_each_passage_shows_its_documents_date_and_source_as_text(page):
    """A canned answer whose passages carry a date and a source (one made to look like markup), and one none."""
    import json

    from tanglerag.service.schemas import AskResponse
    from tanglerag.trace import Trace
    from tanglerag.types import Answer, RetrievedPassage, Usage

    dated = [TANGLED[0].model_copy(update={"metadata": {"date": "2024-03-01", "source": "<b>example.org</b>"}}),
             TANGLED[1].model_copy(update={"metadata": {"date": "2019"}}), TANGLED[2]]
    answer = AskResponse.from_answer(Answer(
        question="What is Paris?", method="concat", text="Paris is the capital of France [1]", citations=["paris-fr"],
        passages=[RetrievedPassage(passage=p, score=0.5, rank=i) for i, p in enumerate(dated, 1)], usage=Usage(),
        trace=Trace()), trace=True).model_dump(mode="json")
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {json.dumps(answer)}\n\n"))
    ask(page, "What is Paris?", "concat")
    about = page.locator("#col-0 .passage .pid")
    assert about.nth(0).inner_text() == "[1] paris-fr · 0.500 · 2024-03-01 · <b>example.org</b>"
    assert about.nth(1).inner_text() == "[2] paris-tx · 0.500 · 2019"
    assert about.nth(2).inner_text() == "[3] paris-fr-2 · 0.500"
    assert page.locator("#col-0 .passage b").count() == 0  # a document's words are text, never markup


def test_each_passage_and_conflict_side_says_its_page_and_section(page):
    """Issue 51: passages read from files (a PDF page with its headings, a Markdown section, a JSONL record with no
    place) in a canned answer with a conflict report: the passage list and the report's sides say where each stands."""
    import json

    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.methods.base import make_method
    from tanglerag.service.schemas import AskResponse
    from tanglerag.settings import Settings
    from tanglerag.types import Question
    from tests.conflicting import JORDAN, QUESTION, conflicting_backend
    from tests.conftest import as_retrieved, resources

    places = {"bio": {"path": "sources/bio-2024.pdf", "page": 12, "section": ["Early life", "Birth"]},
              "bulls": {"path": "teams/bulls.md", "section": ["Players"]}}
    placed = [p.model_copy(update={"metadata": places.get(p.id, {})}) for p in JORDAN]
    settings = Settings.load(overrides=["conflicts.report=true"])
    method = make_method("concat", resources(LLM(conflicting_backend(), CallCache(None)), settings))
    body = AskResponse.from_answer(method.answer(Question(text=QUESTION), as_retrieved(placed)), trace=True)
    answer = body.model_dump(mode="json")
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {json.dumps(answer)}\n\n"))
    ask(page, QUESTION, "concat")
    about = page.locator("#col-0 .passage .pid").all_inner_texts()
    assert about[0] == "[1] bio · 1.000 · bio-2024.pdf p. 12, §Early life > Birth"
    assert about[1] == "[2] bulls · 0.900 · bulls.md §Players"
    assert about[2] == "[3] fan · 0.800"
    kept = page.locator("#col-0 section.conflicts .sides li").nth(0).inner_text()
    assert kept == "kept 1963 [1] (bio-2024.pdf p. 12, §Early life > Birth) [2] (bulls.md §Players) · 2 witnesses"
    shot(page, "inspector-places")


def test_the_methods_for_a_persons_documents_come_first_apart_from_the_paper_reproductions(page):
    groups = page.eval_on_selector_all("#method-a optgroup", "gs => gs.map(g => [g.label, g.children.length])")
    assert [label for label, _ in groups] == ["For your documents", "Papers, baselines, peers"]
    first = page.eval_on_selector_all("#method-a optgroup:first-child option", "os => os.map(o => o.value)")
    assert first == ["vetted", "ledger", "concat", "corg", "auto"] and groups[1][1] > 10


def test_the_passages_show_when_retrieval_ends_before_the_answer(browser, slow_server):
    """Issue 69: retrieval takes milliseconds, the model seconds; the passages are on the page meanwhile."""
    page = _asked(browser, slow_server, "What is the capital of France?", "concat")
    page.wait_for_selector("#col-0 .early .passage")
    assert page.locator("#col-0 .state").inner_text().startswith("running")  # the answer is still being worked out
    assert page.locator("#col-0 .early .passage").count() == 3
    shot(page, "inspector-passages-first")
    page.wait_for_selector("#status:text('done')")
    assert page.locator("#col-0 .early").count() == 0 and page.locator("#col-0 .passage").count() == 3
    assert "Paris is the capital of France" in page.locator("#col-0 .answer").first.inner_text()
    page.close()


def test_an_unknown_answer_says_the_documents_do_not_say_and_one_call_is_one_call(page):
    """A newcomer read a bare "unknown" as a fault, and "1 LLM calls" was the page's own count."""
    import json

    from tanglerag.service.schemas import AskResponse
    from tanglerag.types import Answer

    answer = AskResponse.from_answer(Answer(question="Who is the on-call manager?", method="vetted", text="unknown"),
                                     trace=True).model_dump(mode="json")
    answer["usage"]["llm_calls"] = 1
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {json.dumps(answer)}\n\n"))
    ask(page, "Who is the on-call manager?", "concat")
    assert page.locator("#col-0 .unknown-note").inner_text().startswith("The documents do not say")
    assert page.locator("#status").inner_text().startswith("done")
    assert "1 LLM call ·" in page.locator("#col-0").inner_text()


def test_passages_sent_again_in_the_methods_order_replace_the_retrieved_list(page):
    """vetted sends the passages again, ranked, before its answer streams: the answer's [1] is the first listed."""
    import json

    from tanglerag.service.schemas import AskResponse
    from tanglerag.types import Answer
    from tests.conftest import as_retrieved

    hits = as_retrieved([Passage(id="blog", title="A blog", text="12 hours is plenty."),
                         Passage(id="note", title="Guidance note", text="Wait at least 24 hours.")])
    shown = AskResponse.from_answer(Answer(question="q", method="vetted", text="24 hours [1]", passages=hits),
                                    trace=True) \
        .model_dump(mode="json")["passages"]

    def event(passages):
        return f"event: passages\ndata: {json.dumps({'type': 'passages', 'data': {'passages': passages}})}\n\n"

    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=event(shown) + event(shown[::-1])))
    page.fill("#question", "How long before grouting?")
    page.keyboard.press("Enter")
    page.wait_for_selector("#col-0 .early h3:text('as the method ranked them')")
    assert page.locator("#col-0 .early").count() == 1  # replaced, not a second list
    assert page.locator("#col-0 .early .passage").first.inner_text().find("Guidance note") >= 0


def test_a_conflicts_step_without_claims_shows_no_empty_claims_table(page):
    """vetted records its report with no claims: a tester saw an empty table header under "Claims and conflicts"."""
    import json

    from tanglerag.llm.cache import CallCache
    from tanglerag.llm.client import LLM
    from tanglerag.methods.base import make_method
    from tanglerag.service.schemas import AskResponse
    from tanglerag.settings import Settings
    from tanglerag.types import Question
    from tests.conflicting import JORDAN, QUESTION, conflicting_backend
    from tests.conftest import as_retrieved, resources

    settings = Settings.load(overrides=["conflicts.report=true"])
    method = make_method("concat", resources(LLM(conflicting_backend(), CallCache(None)), settings))
    answer = AskResponse.from_answer(method.answer(Question(text=QUESTION), as_retrieved(JORDAN)),
                                     trace=True).model_dump(mode="json")
    answer["trace"]["steps"][0]["claims"] = []
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {json.dumps(answer)}\n\n"))
    ask(page, QUESTION, "concat")
    view = page.locator("#col-0 details[data-kind='conflicts']")
    assert view.count() == 1 and view.locator("table.claims").count() == 0
    assert view.locator("table.sides").count() >= 1  # the report's sides are still there


def test_vetteds_step_lists_the_passages_in_reading_order_with_labels_and_what_was_left_out(page):
    """The tester saw vetted's vetting as raw JSON."""
    import json

    from tanglerag.methods.ledger.vetting import VettingStep
    from tanglerag.service.schemas import AskResponse
    from tanglerag.trace import Trace
    from tanglerag.types import Answer
    from tests.conftest import as_retrieved

    hits = as_retrieved([Passage(id="note", title="Guidance note", text="Wait at least 24 hours."),
                         Passage(id="blog", title="A blog", text="12 hours is plenty.")])
    step = VettingStep(shown=["note"], labels={"note": "2022-10-18"}, left_out={"blog": "informal: a blog post"},
                       restated="unstated-value: no passage states 42 hours; the cited ones state 24 hours")
    answer = AskResponse.from_answer(Answer(question="q", method="vetted", text="24 hours [1]", citations=["note"],
                                            passages=hits, trace=Trace(steps=[step])), trace=True)
    body = json.dumps(answer.model_dump(mode="json"))
    page.route("**/v1/ask?stream=true", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=f"event: answer\ndata: {body}\n\n"))
    ask(page, "How long before grouting?", "concat")
    view = page.locator("#col-0 details[data-kind='vetting']")
    assert view.locator("summary").inner_text() == "Vetted passages" and view.locator("pre").count() == 0
    assert view.locator("ol.shown li").text_content() == "[1] 2022-10-18"  # folded: its text, not its rendering
    assert view.locator("ul.left-out li").text_content() == "[2] informal: a blog post"
    assert view.locator(".restated").text_content().startswith("unstated-value")
