"""Sources as data (issue 52, item 2): each cited passage, with where it comes from, rides on the chat message (and
on the streamed delta that carries the content, and on a legacy completion's choice) as an extra ``sources`` field
the real ``openai`` SDK keeps in ``model_extra``, numbered as the content's [n] marks are."""

import openai

from tanglerag.testing import CannedBackend
from tests.service.conftest import client_for, make_runtime

JSONL = {"Content-Type": "application/x-ndjson"}
RECORDS = (b'{"id": "old", "title": "Oslo 1990", "text": "Oslo is the capital of Norway.", "date": "1990", '
           b'"source": "atlas.org"}\n'
           b'{"id": "new", "title": "Oslo 2024", "text": "Oslo is the capital of Norway, as ever.", '
           b'"date": "2024-03-01", "source": "gov.no"}\n')
NOTE = b"# Capitals\n\n## Norway\n\nOslo is the capital of Norway (note).\n"
QUESTION = [{"role": "user", "content": "capital of Norway Oslo"}]


def _sdk(tmp_path, http):
    assert http.post("/v1/index/documents", content=RECORDS, headers=JSONL).json()["added"] == 2
    assert http.post("/v1/index/documents", files=[("files", ("notes/oslo.md", NOTE, "text/markdown"))]
                     ).json()["added"] >= 1
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)


def test_sources_ride_on_the_message_the_stream_and_a_legacy_completion(tmp_path):
    backend = CannedBackend([("capital of Norway", "Oslo [1] [4]")], default="unknown")
    with client_for(make_runtime(tmp_path, backend=backend, overrides=["retrieval.top_k=4"])) as http:
        sdk = _sdk(tmp_path, http)
        whole = sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION)
        chunks = list(sdk.chat.completions.create(model="tanglerag/concat", messages=QUESTION, stream=True))
        legacy = sdk.completions.create(model="tanglerag/concat", prompt="capital of Norway Oslo")
    sources = whole.choices[0].message.model_extra["sources"]
    assert sources == [
        {"n": 1, "id": "old", "title": "Oslo 1990", "date": "1990", "source": "atlas.org"},
        {"n": 4, "id": "notes/oslo.md", "title": "Capitals", "location": "oslo.md §Capitals > Norway",
         "section": ["Capitals", "Norway"]}]
    assert [s["id"] for s in sources] == whole.model_extra["tanglerag"]["citations"]
    assert whole.choices[0].message.content.split("Sources:\n", 1)[1].splitlines() == [
        "[1] Oslo 1990 (old) · 1990 · atlas.org", "[4] Capitals · oslo.md §Capitals > Norway"]
    streamed = [(c.choices[0].delta.model_extra or {}).get("sources") for c in chunks if c.choices]
    assert [s for s in streamed if s is not None] == [sources]  # once, on the delta with the content
    assert legacy.choices[0].model_extra["sources"] == sources


def test_a_passage_without_metadata_has_only_its_mark_id_and_title(tmp_path):
    with client_for(make_runtime(tmp_path)) as http:
        sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)
        whole = sdk.chat.completions.create(model="tanglerag/concat", messages=[
            {"role": "user", "content": "What is the capital of France?"}])
    first = whole.model_extra["tanglerag"]["passages"][0]
    assert whole.choices[0].message.model_extra["sources"] == [{"n": 1, "id": first["id"], "title": first["title"]}]


def test_a_background_task_has_no_sources(tmp_path):
    task = ("### Task:\nGenerate a concise title.\n### Output:\nJSON format: { \"title\": \"your title\" }\n"
            "<chat_history>\nUSER: What is the capital of France?\n</chat_history>")
    with client_for(make_runtime(tmp_path, overrides=["service.background_tasks=plain"])) as http:
        sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=http, max_retries=0)
        reply = sdk.chat.completions.create(model="tanglerag/concat", messages=[{"role": "user", "content": task}])
    assert reply.choices[0].message.model_extra["sources"] == [] and reply.model_extra["tanglerag"] is None


def test_a_source_whose_location_names_its_file_is_not_named_twice_and_set_aside_lines_are_not_repeated():
    """A chat user read "(policy.md) · policy.md §Rules" and the conflict twice: in the answer's "Set aside:" line
    and in a "Sources disagree" sentence below it."""
    from tanglerag.conflicts import ConflictReport, Side
    from tanglerag.service.chat import _disagreement, _named
    from tanglerag.service.schemas import Source

    assert _named(Source(n=1, id="policy.md#2", title="Remote work", location="policy.md §Rules")) == "Remote work"
    assert _named(Source(n=1, id="p7", title="Remote work")) == "Remote work (p7)"
    assert _named(Source(n=1, id="hr/policy.pdf#4", title="Leave", location="policy.pdf p. 12")) == "Leave"
    report = ConflictReport(kind="outdated", rule="newest: dated 2022", sides=[
        Side(answer="3 days", passages=["a"], witnesses=1, verdict="kept"),
        Side(answer="2 days", passages=["b"], witnesses=1, verdict="rejected", note="dated 2022")])

    class Output:
        conflicts = [report]
        answer = "3 days [1]"

    assert _disagreement(Output()).startswith("\n\nSources disagree: 3 days (1 source) vs 2 days")  # type: ignore[arg-type]
    Output.answer = "3 days [1]\nSet aside: 2 days: dated 2022 [2]"
    assert _disagreement(Output()) == ""  # type: ignore[arg-type]
