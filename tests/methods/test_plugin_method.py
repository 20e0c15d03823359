"""The recipe in the README, proved: a family from outside the package (``tests/methods/toy_plugin``: a method, a trace
step, a settings section with a per-request option, a stage and an inspector view), registered with one call or
through an entry point, works in ``ask``, ``eval``, ``trace show``, settings and the service without touching any
file of the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.family import FAMILIES, register_family
from tests.methods.toy_plugin import FAMILY, ToyConfig
from tests.service.conftest import client_for, make_runtime

runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_family(FAMILY)
    yield
    FAMILIES.remove(FAMILY.name)


@pytest.fixture
def corpus(tmp_path):
    rows = [{"id": "a", "title": "Mercury", "text": "Mercury is the smallest planet."},
            {"id": "b", "title": "Mercury", "text": "Mercury is a chemical element, symbol Hg."},
            {"id": "c", "title": "Venus", "text": "Venus is the second planet from the Sun."}]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_ask_and_trace_show_use_the_plugin_step(tmp_path, corpus):
    common = ["--set", f"cache_dir={tmp_path / 'cache'}"]
    assert runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), *common]).exit_code == 0
    asked = runner.invoke(app, ["ask", "What is Mercury?", "--index", str(tmp_path / "idx"), "--method",
                                "toy-title-vote", "--top-k", "3", "--json", "--trace", *common])
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert out["answer"].startswith("Mercury") and sorted(out["citations"]) == ["a", "b"]
    assert out["trace"]["steps"] == [{"kind": "toy_title_vote", "counts": {"Mercury": 2, "Venus": 1}}]

    plain = runner.invoke(app, ["ask", "What is Mercury?", "--index", str(tmp_path / "idx"), "--method",
                                "toy-title-vote", "--top-k", "3", *common])
    assert "toy: 2 distinct titles" in plain.stdout  # the step's own headline

    (tmp_path / "why.json").write_text(asked.stdout)
    shown = runner.invoke(app, ["trace", "show", str(tmp_path / "why.json")])
    assert shown.exit_code == 0, shown.output
    assert "title vote" in shown.stdout and "Mercury: 2" in shown.stdout


def test_eval_scores_the_plugin_method(tmp_path):
    result = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "toy-title-vote,concat",
                                 "--limit", "2", "--out", str(tmp_path / "run"), "--json", "--metrics", "em,cited",
                                 "--set", "llm.backend=openai", "--set", "llm.base_url=http://127.0.0.1:9/v1",
                                 "--set", "llm.max_retries=0", "--set", f"cache_dir={tmp_path / 'cache'}"])
    # concat needs a server that is not there: the run fails as a user error, naming the server
    assert result.exit_code == 2 and "127.0.0.1:9" in result.output
    result = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "toy-title-vote", "--limit", "2",
                                 "--out", str(tmp_path / "run"), "--json", "--metrics", "em,cited",
                                 "--set", f"cache_dir={tmp_path / 'cache'}"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["results"][0]["method"] == "toy-title-vote" and report["results"][0]["metrics"]["cited"] == 1.0
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["trace"]["steps"][0]["kind"] for r in rows] == ["toy_title_vote", "toy_title_vote"]


def test_the_service_lists_and_runs_the_plugin_method(tmp_path):
    with client_for(make_runtime(tmp_path)) as client:
        assert "toy-title-vote" in {m["name"] for m in client.get("/v1/methods").json()}
        reply = client.post("/v1/ask", json={"question": "What is the capital of France?", "method": "toy-title-vote"})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["trace"]["steps"][0]["kind"] == "toy_title_vote" and body["citations"]


def test_the_family_has_its_settings_section_and_its_stage(tmp_path, corpus):
    from tanglerag.settings import Settings

    assert Settings.load(overrides=["toy.min_count=3"]).section(ToyConfig).min_count == 3
    common = ["--set", f"cache_dir={tmp_path / 'cache'}"]
    assert runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), *common]).exit_code == 0
    ask = ["ask", "What is Mercury?", "--index", str(tmp_path / "idx"), "--method", "toy-title-vote", "--top-k", "3",
           "--json", *common]
    answered = json.loads(runner.invoke(app, [*ask, "--set", "llm.structured_stages.tally=on"]).stdout)
    assert answered["answer"].startswith("Mercury") and "tally" in answered["usage_by_stage"]
    abstained = runner.invoke(app, [*ask, "--set", "toy.min_count=3"])  # two passages carry Mercury: not enough
    assert abstained.exit_code == 0, abstained.output
    assert json.loads(abstained.stdout)["answer"] == "unknown"


PLUGIN_CHECK = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from tanglerag.family import FAMILIES
    from tests.service.conftest import client_for, make_runtime

    assert "toy" in FAMILIES  # found through the entry point: nothing registered it by hand
    with client_for(make_runtime(Path(sys.argv[1]))) as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]["Options"]["properties"]
        asked = {"question": "What is the capital of France?", "method": "toy-title-vote"}
        plain = client.post("/v1/ask", json=asked).json()
        strict = client.post("/v1/ask", json={**asked, "options": {"toy.min_count": 3}}).json()
        print(json.dumps({"option": "toy.min_count" in schema, "plain": plain["answer"], "strict": strict["answer"],
                          "stages": sorted(plain["usage_by_stage"]), "view": "toy view" in client.get("/views.js").text,
                          "methods": [m["name"] for m in client.get("/v1/methods").json()]}))
''')


def test_an_installed_plugin_registers_through_its_entry_point(tmp_path):
    # an installed distribution, as pip leaves one: its code and a dist-info naming the entry point
    site = tmp_path / "site"
    (site / "toy_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "toy_plugin-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (site / "toy_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[tanglerag.families]\ntoy = tests.methods.toy_plugin:FAMILY\n")
    env = {"PYTHONPATH": f"{site}:{Path.cwd()}", "HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}
    done = subprocess.run([sys.executable, "-c", PLUGIN_CHECK, str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["option"] and seen["view"] and "toy-title-vote" in seen["methods"]
    assert seen["strict"] == "unknown" and seen["plain"] != "unknown" and "tally" in seen["stages"]


def test_an_async_plugin_method_answers_through_every_door(tmp_path, corpus):
    """``toy-ask-title`` implements ``arun`` only: the sync facade, the awaited API and an evaluation all answer
    with it; ``toy-title-vote`` (``run`` only) answers beside it through the same doors."""
    import asyncio

    from tanglerag.api import Tanglerag
    from tanglerag.settings import Settings
    from tanglerag.testing import HashEmbedder, canned_llm

    rag = Tanglerag(tmp_path / "idx", Settings.load(overrides=[f"cache_dir={tmp_path}", "retrieval.top_k=3"]),
                    llm=canned_llm([("Which title", "It is about Venus.")]), embedder=HashEmbedder())
    rag.build(corpus)
    asked = rag.ask("Which planet is second from the Sun?", method="toy-ask-title")
    awaited = asyncio.run(rag.aask("Which planet is second from the Sun?", method="toy-ask-title"))
    assert asked.text == awaited.text and asked.text.startswith("Venus [") and asked.citations == ["c"]
    assert [c.stage for c in asked.trace.calls] == ["tally"]
    voted = rag.ask("What is Mercury?", method="toy-title-vote")
    assert voted.text.startswith("Mercury") and sorted(voted.citations) == ["a", "b"]
    report = rag.evaluate("ramdocs-sample", methods=["toy-ask-title", "toy-title-vote"], metrics=["cited"], limit=2)
    assert [r.method for r in report.results] == ["toy-ask-title", "toy-title-vote"] and report.n == 2
