"""What the service lets a caller see, over the wire (issue 49): no LLM server address, raw reply or server path in
an error; passages clipped; the security headers on every response; /metrics behind a key beyond loopback; the
inspector still working under its Content-Security-Policy in a real browser."""

from __future__ import annotations

import logging

import httpx
import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.service.auth import ApiKeys
from tanglerag.testing import CannedBackend, fake_openai_server
from tanglerag.types import Passage
from tests.reliability.serving import runtime_on_server, served
from tests.service.browsing import CHROMIUM, needs_chromium
from tests.service.conftest import ADMIN, ALICE, bearer, make_runtime
from tests.service.test_inspector_browser import TANGLED, tangled_reply

ASK = {"question": "What is the capital of France?"}
CHAT = {"model": "tanglerag/concat", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
RAW_REPLY = b"SECRET-REPLY upstream key sk-live-0123456789 rejected"


def _sse_error(text: str) -> str:
    """The error of a stream, ``/v1/ask``'s ``error`` event or a chat stream's error chunk."""
    for block in text.split("\n\n"):
        if "error" in block:
            return block
    raise AssertionError(f"no error in the stream: {text[-500:]}")


def test_the_llm_servers_address_and_raw_reply_go_to_the_log_never_to_a_caller(tmp_path, caplog):
    with (fake_openai_server(lambda body: "unused", fail_first=10**6, status=400, fail_body=RAW_REPLY) as llm,
          caplog.at_level(logging.INFO), served(runtime_on_server(tmp_path, llm["base_url"])) as url):
        plain = httpx.post(f"{url}/v1/ask", json=ASK)
        streamed = _sse_error(httpx.post(f"{url}/v1/ask?stream=true", json=ASK).text)
        chat = httpx.post(f"{url}/v1/chat/completions", json=CHAT)
        chat_streamed = _sse_error(httpx.post(f"{url}/v1/chat/completions", json=CHAT | {"stream": True}).text)
    address = llm["base_url"].removeprefix("http://").split("/")[0]  # 127.0.0.1:PORT
    assert plain.status_code == 503 and chat.status_code == 503
    assert chat.json()["error"]["code"] == "model_failed" and '"status": 503' in streamed
    for seen in (plain.text, streamed, chat.text, chat_streamed):
        assert address not in seen and "SECRET" not in seen and "sk-live" not in seen and "http" not in seen, seen
        assert "the LLM failed on this question" in seen and "tell the operator" in seen, seen
    assert address in caplog.text and "SECRET-REPLY" in caplog.text  # the operator still learns where and what


def test_an_unreachable_llm_server_is_named_to_the_log_only(tmp_path, caplog):
    with fake_openai_server(lambda body: "unused") as llm:
        base_url = llm["base_url"]  # the port is free again once the server stops
    with caplog.at_level(logging.INFO), served(runtime_on_server(tmp_path, base_url)) as url:
        plain = httpx.post(f"{url}/v1/ask", json=ASK)
        streamed = _sse_error(httpx.post(f"{url}/v1/ask?stream=true", json=ASK).text)
    port = base_url.split(":")[-1].split("/")[0]
    for seen in (plain.text, streamed):
        assert port not in seen and "cannot be reached" in seen, seen
    assert plain.status_code == 502 and base_url.removesuffix("/v1") in caplog.text


def test_a_server_path_in_an_error_is_cut_to_the_files_name(tmp_path, caplog):
    runtime = make_runtime(tmp_path)
    damaged = tmp_path / "users" / "alice" / "contexts.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text("{not json")
    with caplog.at_level(logging.INFO), served(runtime) as url:
        r = httpx.get(f"{url}/v1/users/alice/contexts")
    assert r.status_code == 400 and "contexts.json is damaged" in r.json()["error"]
    assert str(tmp_path) not in r.text and "/users/" not in r.text
    assert str(damaged) in caplog.text


def test_passages_returned_over_http_are_clipped_and_say_so(tmp_path):
    huge = "Paris is the capital of France. " + "x" * 2_000_000
    runtime = make_runtime(tmp_path, with_index=False)  # service.max_passage_chars at its default
    store_passages(runtime.index_dir, [Passage(id="huge", title="Paris", text=huge),
                                       Passage(id="small", title="Berlin", text="Berlin is the capital of Germany.")],
                   runtime.embedder, runtime.settings.index)
    with served(runtime) as url:
        asked = httpx.post(f"{url}/v1/ask", json=ASK, timeout=60)
        chat = httpx.post(f"{url}/v1/chat/completions", json=CHAT, timeout=60)
    assert asked.status_code == 200 and len(asked.content) < 200_000 and len(chat.content) < 200_000
    limit = runtime.settings.service.max_passage_chars
    for passages in (asked.json()["passages"], chat.json()["tanglerag"]["passages"]):
        by_id = {p["id"]: p["text"] for p in passages}
        assert by_id["huge"].startswith(huge[:limit])
        assert by_id["huge"].endswith(f"x [... {len(huge) - limit} more characters not shown: "
                                      "service.max_passage_chars]")
        assert by_id["small"] == "Berlin is the capital of Germany."


SECURITY = {"x-frame-options": "DENY", "x-content-type-options": "nosniff"}


def test_every_response_carries_the_security_headers(tmp_path):
    with served(make_runtime(tmp_path, overrides=["service.max_body_bytes=1000"])) as url:
        responses = [httpx.get(f"{url}{path}") for path in ("/", "/runs", "/static/inspector.js", "/views.js",
                                                            "/healthz", "/v1/methods", "/metrics", "/nowhere")]
        responses += [httpx.post(f"{url}/v1/ask", json={}), httpx.post(f"{url}/v1/ask?stream=true", json=ASK),
                      httpx.post(f"{url}/v1/ask", content=b"x" * 5000)]
    assert {r.status_code for r in responses} >= {200, 404, 413, 422}
    for r in responses:
        assert {name: r.headers.get(name) for name in SECURITY} == SECURITY, r.url
        policy = r.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy, r.url
        assert "script-src" not in policy and "'unsafe-eval'" not in policy  # scripts: this server's files only


@pytest.mark.parametrize(("host", "setting", "open_without_key"), [
    ("127.0.0.1", None, True),  # a scraper on the same machine needs no key
    ("0.0.0.0", None, False),  # beyond loopback: the admin key
    ("127.0.0.1", "true", False),
    ("0.0.0.0", "false", True),
])
def test_metrics_need_the_admin_key_beyond_loopback(tmp_path, host, setting, open_without_key):
    overrides = [f"service.host={host}"] + ([f"service.metrics_key_required={setting}"] if setting else [])
    keys = ApiKeys.load(env=f"{ADMIN},{ALICE}=alice")
    with served(make_runtime(tmp_path, overrides=overrides), keys) as url:
        anonymous = httpx.get(f"{url}/metrics")
        alice = httpx.get(f"{url}/metrics", headers=bearer(ALICE))
        admin = httpx.get(f"{url}/metrics", headers=bearer(ADMIN))
    assert admin.status_code == 200 and "tanglerag_requests_total" in admin.text
    if open_without_key:
        assert anonymous.status_code == 200 and alice.status_code == 200
    else:
        assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"] == "Bearer"
        assert alice.status_code == 403 and "tanglerag_" not in anonymous.text + alice.text


@needs_chromium
def test_the_inspector_works_under_its_policy_and_cannot_be_framed(tmp_path):
    """COrg's graph legend sets style attributes from script: the policy allows those and nothing inline else."""
    from playwright.sync_api import sync_playwright

    runtime = make_runtime(tmp_path, with_index=False, backend=CannedBackend(responder=tangled_reply))
    store_passages(runtime.index_dir, TANGLED, runtime.embedder, runtime.settings.index)
    with served(runtime) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        refused = []
        page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in
                message.text else None)
        page.goto(url)
        page.fill("#question", "What is Paris?")
        page.select_option("#method-a", "corg")
        page.keyboard.press("Enter")
        page.wait_for_selector("#status:text('done')")
        page.locator("#col-0 details[data-kind='corg_graph'] summary").click()
        legend_colour = page.evaluate("getComputedStyle(document.querySelector('.legend i')).backgroundColor")
        answer = page.locator("#col-0 .answer").inner_text()
        framer = browser.new_page()
        framer.set_content(f'<iframe id="f" src="{url}/"></iframe>')
        framer.wait_for_timeout(1500)
        framed = [frame.url for frame in framer.frames if frame.url.startswith(url)]
        browser.close()
    assert "Paris, France" in answer and refused == []
    assert legend_colour not in ("rgba(0, 0, 0, 0)", "transparent")  # the style attribute was applied
    assert framed == []  # X-Frame-Options DENY and frame-ancestors 'none': the browser does not show it
