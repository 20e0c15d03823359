"""The recipe in the README, proved: a method and its trace step defined here, in a test module, registered with
one call, run through ``ask``, ``eval``, ``trace show`` and the service without touching any file of the package."""

from __future__ import annotations

import json
from typing import ClassVar, Literal

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.methods.base import METHODS, Method, MethodOutput, register_methods
from tanglerag.trace import TraceStep
from tanglerag.tracking import record_step
from tanglerag.types import Question, RetrievedPassage
from tests.service.conftest import client_for, make_runtime

pytestmark = pytest.mark.xdist_group("torch")  # the tests that load torch (MiniLM, a reader) share a worker: one ~8 s import

runner = CliRunner()


class TitleVoteStep(TraceStep):
    """Which titles the passages carry and how many passages carry each."""

    kind: Literal["toy_title_vote"] = "toy_title_vote"
    title: ClassVar[str] = "Title vote"
    counts: dict[str, int]

    def lines(self) -> list[str]:
        return ["title vote", *(f"  {title}: {n}" for title, n in self.counts.items())]

    def headline(self) -> str | None:
        return f"toy: {len(self.counts)} distinct titles"


class TitleVoteMethod(Method):
    """Answers with the title most passages share (ties: the best-ranked), citing every passage that carries it."""

    name: ClassVar[str] = "toy-title-vote"
    paper: ClassVar[str] = "baseline"
    description: ClassVar[str] = "the most common passage title (a plug-in example; no LLM)"
    calls: ClassVar[str] = "0"

    def run(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        counts: dict[str, int] = {}
        for hit in passages:
            counts[hit.passage.title or hit.passage.id] = counts.get(hit.passage.title or hit.passage.id, 0) + 1
        record_step(TitleVoteStep(counts=counts))
        if not counts:
            return MethodOutput.abstain()
        best = max(counts, key=lambda t: counts[t])  # dicts keep retrieval order: ties go to the best-ranked
        cited = [h.passage.id for h in passages if (h.passage.title or h.passage.id) == best]
        numbers = " ".join(f"[{i}]" for i, h in enumerate(passages, 1) if h.passage.id in cited)
        return MethodOutput(f"{best} {numbers}", cited)


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_methods(TitleVoteMethod)
    yield
    METHODS.pop(TitleVoteMethod.name)


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
