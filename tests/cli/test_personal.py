"""CLI for personal context: contexts add/list/remove, ask --user (PCAS), pcas build and the ORCA eval."""

import json

from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.testing import fake_openai_server

runner = CliRunner()


def _common(tmp_path):
    return ["--set", f"cache_dir={tmp_path / 'cache'}", "--set", f"personal.store_dir={tmp_path / 'users'}"]


def test_contexts_and_ask_for_two_isolated_users(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": "wfp-abroad", "text": "Winter Fuel Payment abroad: you can get it if you live in Switzerland."},
            {"id": "wfp-uk", "text": "Winter Fuel Payment: you can get it if you were born before 1955 and live in "
                                     "the UK."},
            {"id": "boots", "text": "Exporting boots needs an export licence."}]
    corpus.write_text("\n".join(json.dumps(r) for r in rows))
    assert runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), *_common(tmp_path)]).exit_code == 0

    added = runner.invoke(app, ["contexts", "add", "--user", "alice", "I live in the Swiss Alps.",
                                "I am trying to export some boots.", *_common(tmp_path)])
    assert added.exit_code == 0, added.output
    runner.invoke(app, ["contexts", "add", "--user", "bob", "I was born in 1950 in Leeds.", *_common(tmp_path)])
    alice = json.loads(runner.invoke(app, ["contexts", "list", "--user", "alice", *_common(tmp_path)]).stdout)
    assert [c["text"] for c in alice] == ["I live in the Swiss Alps.", "I am trying to export some boots."]

    def reply(body):
        prompt = body["messages"][-1]["content"]
        return "Yes [1]" if "About the user:" in prompt else "unknown"

    with fake_openai_server(reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}"]
        for user, expected in [("alice", "I live in the Swiss Alps."), ("bob", "I was born in 1950 in Leeds.")]:
            result = runner.invoke(app, ["ask", "Can I get Winter Fuel Payment?", "--index", str(tmp_path / "idx"),
                                         "--user", user, "--top-k", "2", "--json", "--trace", *llm,
                                         *_common(tmp_path)])
            assert result.exit_code == 0, result.output
            out = json.loads(result.stdout)
            assert out["user_context"]["text"] == expected and out["answer"] == "Yes [1]"
            step = next(s for s in out["trace"]["steps"] if s["kind"] == "personal_context")
            assert step["user"] == user and step["text"] == expected and step["context_id"]
        prompts = [b["messages"][-1]["content"] for b in server["bodies"]]
    assert "Swiss Alps" in prompts[0] and "Leeds" not in prompts[0]
    assert "Leeds" in prompts[1] and "Swiss Alps" not in prompts[1] and "boots." not in prompts[1]

    removed = runner.invoke(app, ["contexts", "remove", "--user", "alice", alice[1]["id"], *_common(tmp_path)])
    assert removed.exit_code == 0
    assert len(json.loads(runner.invoke(app, ["contexts", "list", "--user", "alice",
                                              *_common(tmp_path)]).stdout)) == 1
    bad = runner.invoke(app, ["contexts", "add", "--user", "../x", "hi", *_common(tmp_path)])
    assert bad.exit_code == 2 and "invalid user id" in bad.output


def test_pcas_build_then_eval(tmp_path):
    source = tmp_path / "dev.jsonl"
    rows = [{"utterance_id": f"u{i}", "question": q, "scenario": sc, "gold_snippet_id": gold,
             "source_url": f"https://gov.uk/{gold}"}
            for i, (q, sc, gold) in enumerate([
                ("Can I get Winter Fuel Payment?", "I live in Switzerland.", "0"),
                ("Can I get Winter Fuel Payment?", "I was born in 1950.", "1"),
                ("Do I need a licence?", "I export boots.", "2"),
                ("Am I paid the apprentice rate?", "I am 18 and an apprentice.", "3")])]
    source.write_text("\n".join(json.dumps(r) for r in rows))
    snippets = tmp_path / "id2snippet.json"
    snippets.write_text(json.dumps({"0": "Winter Fuel Payment abroad: paid if you live in Switzerland.",
                                    "1": "Winter Fuel Payment: paid if you were born before 1955.",
                                    "2": "Exporting boots needs an export licence.",
                                    "3": "The apprentice rate applies if you are under 19."}))
    def all_ok(body):
        n = sum(1 for line in body["messages"][-1]["content"].splitlines() if line[:1].isdigit())
        return "\n".join(f"{i}: ok" for i in range(1, n + 1))

    with fake_openai_server(all_ok) as server:
        built = runner.invoke(app, ["pcas", "build", "--source", str(source), "--out", str(tmp_path / "orca"),
                                    "--contexts", "3", "--judge-above", "0", "--set", "llm.backend=openai",
                                    "--set", f"llm.base_url={server['base_url']}", *_common(tmp_path)])
    assert built.exit_code == 0, built.output
    manifest = json.loads(built.stdout)
    assert manifest["examples"] == 4 and manifest["mean_contexts"] == 3.0 and manifest["llm_calls"] == 4

    result = runner.invoke(app, ["eval", "--dataset", str(tmp_path / "orca"), "--methods", "or,b1,b2,b3,pcas",
                                 "--corpus", str(snippets), "--retriever", "bm25", "--sweep", "--json",
                                 "--out", str(tmp_path / "res"), *_common(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == 4 and [r["method"] for r in report["results"]] == \
        ["or-bm25", "b1-bm25", "b2-bm25", "b3-bm25", "pcas-bm25"]
    pcas = report["results"][-1]["metrics"]
    assert set(pcas) == {"doc_recall@1", "doc_recall@5", "doc_map@5", "context_recall@1"}
    assert report["results"][1]["metrics"]["context_recall@1"] is None  # B1 picks no context
    assert len(report["setting"]["tuned"]["bm25"]["grid"]) == 27
    usage = report["results"][-1]["usage"]
    assert usage["llm_calls"] == 0 and usage["seconds"] > 0  # measured retrieval time, no LLM
    assert report["settings"]["personal"]["lam"] == 0.6
    assert (tmp_path / "res" / "results.json").exists()
