"""CLI end to end: real MiniLM embeddings, the LLM served by a fake OpenAI-compatible server."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tanglerag.cli import app
from tanglerag.index.passage_store import PassageStore
from tanglerag.testing import fake_openai_server

runner = CliRunner()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    rows = [{"id": "fr", "title": "France", "text": "Paris is the capital of France."},
            {"id": "de", "title": "Germany", "text": "Berlin is the capital of Germany."},
            {"id": "it", "title": "Italy", "text": "Rome is the capital of Italy."}]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _reply(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    return "Berlin [1]" if "Germany" in prompt.split("Question:")[-1] else "unknown"


def test_index_add_replace_and_remove_documents(tmp_path, corpus):
    common = ["--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path / 'cache'}"]
    assert runner.invoke(app, ["index", str(corpus), *common]).exit_code == 0
    changed = tmp_path / "changed.jsonl"
    changed.write_text(json.dumps({"id": "de", "title": "Germany", "text": "Bonn was the capital of West Germany."}))
    result = runner.invoke(app, ["index", str(changed), "--add", *common])
    assert result.exit_code == 2 and "document id 'de' already in the index with other text" in _said(result)
    result = runner.invoke(app, ["index", str(changed), "--add", "--replace", *common])
    assert result.exit_code == 0 and "replaced de" in _said(result) and "3 passages" in _said(result)
    result = runner.invoke(app, ["index", "--remove", "fr,it", "--index", *common[1:]])  # --index: as ask names it
    assert result.exit_code == 0 and "removed 2 document(s): 2 passages" in _said(result), result.output
    assert "1 passages" in _said(result)
    result = runner.invoke(app, ["index", "--remove", "fr", *common])
    assert result.exit_code == 2 and "no document with id 'fr'" in _said(result)
    stored = PassageStore(next((tmp_path / "idx").glob("data-*/passages.sqlite3")))
    assert [p.text for p in stored] == ["Bonn was the capital of West Germany."]


def _said(result) -> str:
    return " ".join(result.output.split())  # rich wraps long lines


def test_index_then_ask_json_then_cached(tmp_path, corpus):
    common = ["--set", f"cache_dir={tmp_path / 'cache'}"]
    result = runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--index-type", "hnsw",
                                 "--bm25", *common])
    assert result.exit_code == 0, result.output
    assert "3 passages, hnsw + bm25" in " ".join(result.output.split())

    with fake_openai_server(_reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
               "--set", "llm.model=served-model", *common]
        args = ["ask", "What is the capital of Germany?", "--index", str(tmp_path / "idx"), "--top-k", "2",
                "--json", *llm]
        first = runner.invoke(app, args)
        assert first.exit_code == 0, first.output
        out = json.loads(first.stdout)
        assert out["answer"] == "Berlin [1]" and out["citations"] == ["de"]
        assert out["passages"][0]["id"] == "de" and len(out["passages"]) == 2
        assert set(out["usage"]) >= {"llm_calls", "prompt_tokens", "completion_tokens", "seconds"}
        assert out["usage"]["llm_calls"] == 1 and server["bodies"][0]["model"] == "served-model"

        second = json.loads(runner.invoke(app, args).stdout)
        assert second["usage"]["llm_calls"] == 0 and second["answer"] == "Berlin [1]"
        assert server["requests"] == 1


@pytest.mark.parametrize("selection", [["--limit", "2"], ["--random", "2"], ["--sample", "2"]])  # --sample: old name
def test_eval_json_and_outputs(tmp_path, selection):
    with fake_openai_server(lambda body: "unknown") as server:
        result = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "concat", *selection,
                                     "--out", str(tmp_path / "run"), "--json", "--set", "llm.backend=openai",
                                     "--set", f"llm.base_url={server['base_url']}",
                                     "--set", f"cache_dir={tmp_path / 'cache'}"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dataset"] == "ramdocs-sample" and report["n"] == 2
    assert report["results"][0]["metrics"]["unk"] == 1.0
    assert report["results"][0]["usage"]["llm_calls"] == 1.0
    assert (tmp_path / "run" / "results.md").exists() and (tmp_path / "run" / "predictions.jsonl").exists()


@pytest.mark.parametrize("args, message", [
    (["ask", "   ", "--index", "."], "question is empty"),
    (["ask", "q?", "--index", "/nonexistent"], "not a tanglerag index"),
    (["eval", "--dataset", "ramdocs-sample", "--methods", "nope"], "unknown method"),
    (["eval", "--dataset", "ramdocs-sample", "--metrics", "em,nope"], "unknown metric(s) ['nope']"),
    (["index", "/nonexistent.jsonl", "--out", "x"], "corpus not found"),
    (["eval", "--dataset", "ramdocs-sample", "--methods", "concat", "--sample", "99"], "which has 20 examples"),
    (["eval", "--dataset", "ramdocs-sample", "--random", "2", "--sample", "2"], "old name of --random"),
    (["models", "--set", "llm.bogus=1"], "bogus"),
])
def test_bad_input_exits_2_with_message(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_unreachable_server_is_a_clear_error(tmp_path, corpus):
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])
    result = runner.invoke(app, ["ask", "capital of Italy?", "--index", str(tmp_path / "idx"),
                                 "--set", "llm.backend=openai", "--set", "llm.base_url=http://127.0.0.1:9/v1",
                                 "--set", "llm.max_retries=1", "--set", "llm.backoff_s=0",
                                 "--set", f"cache_dir={tmp_path}"])
    assert result.exit_code == 2
    assert "unreachable after 2 attempts" in " ".join(result.output.split())


def test_ask_with_post_fusion_fallback_and_eval_flags(tmp_path, corpus):
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if "Passages:" in prompt:
            return "unknown"  # concatenation gives up ...
        return "Rome" if "Rome is the capital" in prompt else "unknown"  # ... one passage answers alone

    with fake_openai_server(reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
               "--set", f"cache_dir={tmp_path}"]
        result = runner.invoke(app, ["ask", "What is the capital of Italy?", "--index", str(tmp_path / "idx"),
                                     "--method", "concat+pf", "--top-k", "3", "--json", *llm])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["method"] == "concat+pf" and out["answer"] == "Rome" and out["citations"] == ["it"]
        assert out["usage"]["llm_calls"] == 4 and set(out["usage_by_stage"]) >= {"generate", "post_fusion"}
        assert "trace" not in out  # the foundation's shape, unless --trace is asked for

        traced = runner.invoke(app, ["ask", "What is the capital of Italy?", "--index", str(tmp_path / "idx"),
                                     "--method", "post-fusion", "--top-k", "3", "--json", "--trace", *llm])
        out = json.loads(traced.stdout)
        pool = next(s for s in out["trace"]["steps"] if s["kind"] == "answer_pool")
        assert pool["winner"] == "Rome" and pool["tally"] == [{"answer": "Rome", "votes": 1, "passage_ids": ["it"]}]
        assert len(out["trace"]["calls"]) == 3 and out["usage"]["cached_calls"] == 3  # post-fusion's calls were cached
        shown = runner.invoke(app, ["trace", "show", "-"], input=traced.stdout)
        assert "1 vote(s)  Rome  <- it" in shown.output and "post_fusion" in shown.output

        evaluated = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "post-fusion,pf+concat",
                                        "--limit", "2", "--gold", "exclude", "--gold-position", "top",
                                        "--json", *llm])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    assert report["setting"]["gold"] == "exclude" and report["setting"]["gold_position"] == "top"
    assert [r["method"] for r in report["results"]] == ["post-fusion", "pf+concat"]
    assert report["results"][0]["metrics"]["nm"] == 0.0


def test_ask_corg_json_has_parts_and_eval_scores_ambiguity(tmp_path, corpus):
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if "Give the relation from context" in prompt:
            return "\n".join(f"[{n}] - distracting" for n in (2, 3) if f"[{n}]," in prompt or f"[{n}], one" in prompt)
        if "Text:" in prompt:  # the D-F1 reader
            return "unknown"
        if "response_format" in body:  # COrg's multi-answer call asks for JSON by default
            return json.dumps({"answers": [{"answer": "Rome", "about": "Italy", "contexts": [3]},
                                           {"answer": "Paris", "about": "France", "contexts": [1]}]})
        return "Rome | Italy | [3]\nParis | France | [1]"  # its baselines' call, as text

    with fake_openai_server(reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
               "--set", f"cache_dir={tmp_path}"]
        result = runner.invoke(app, ["ask", "What is the capital?", "--index", str(tmp_path / "idx"),
                                     "--method", "corg", "--top-k", "3", "--json", "--trace", *llm])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert {p["answer"]: p["descriptor"] for p in out["parts"]} == {"Rome": "Italy", "Paris": "France"}
        assert all(p["citations"] and p["group"] == 0 for p in out["parts"])
        assert set(out["usage_by_stage"]) >= {"organize", "rerank", "generate"}
        assert [c["constrained"] for c in out["trace"]["calls"] if c["stage"] == "generate"] == [True]
        steps = {s["kind"]: s for s in out["trace"]["steps"]}
        ids = [p["id"] for p in out["passages"]]
        assert {(e["source"], e["target"]) for e in steps["corg_graph"]["edges"]} == {
            (ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])}
        assert "distracting" in {e["relation"] for e in steps["corg_graph"]["edges"]}
        assert sorted(pid for g in steps["groups"]["groups"] for pid in g["passage_ids"]) == sorted(ids)
        assert len(out["trace"]["calls"]) == out["usage"]["llm_calls"] + out["usage"]["cached_calls"]
        trace_file = tmp_path / "corg.json"
        trace_file.write_text(result.stdout)
        shown = runner.invoke(app, ["trace", "show", str(trace_file)])
        assert shown.exit_code == 0, shown.output
        assert f"[1] {ids[0]} -- " in shown.output and "groups (corg)" in shown.output
        plain = runner.invoke(app, ["ask", "What is the capital?", "--index", str(tmp_path / "idx"),
                                    "--method", "corg", "--top-k", "3", *llm])
        lines = plain.output.splitlines()
        assert "Rome (Italy) [3]" in lines and "Paris (France) [1]" in lines  # each answer, descriptor, citation
        spent = next(line for line in lines if line.startswith("calls by stage:"))
        organize = out["usage_by_stage"]["organize"]
        assert f"organize {organize['llm_calls'] + organize['cached_calls']} call" in spent and "generate 1 call " in spent
        evaluated = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "corg,base",
                                        "--limit", "2", "--json", *llm])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    assert list(report["results"][0]["metrics"]) == ["ans", "ent", "ear", "d_f1", "unk", "cited"]
    assert report["results"][1]["metrics"]["d_f1"] == 0.0  # the reader never finds Rome or Paris


def test_user_errors_are_one_line_and_bugs_keep_their_traceback(tmp_path, corpus, monkeypatch):
    missing = runner.invoke(app, ["ask", "q?", "--index", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "not a tanglerag index" in missing.output
    assert "Traceback" not in missing.output and len(missing.output.strip().splitlines()) == 1
    empty = runner.invoke(app, ["ask", "  ", "--index", str(tmp_path / "nowhere")])
    assert empty.exit_code == 2 and "question is empty" in empty.output
    unknown = runner.invoke(app, ["eval", "--dataset", "ramdocs-sample", "--methods", "nope"])
    assert unknown.exit_code == 2 and "unknown method" in unknown.output
    for args, message in [(["ask", "q?", "--index", "x", "--top-k", "0"], "top_k"),
                          (["ask", "q?", "--index", "x", "--top-k", "-1"], "top_k"),
                          (["eval", "--dataset", "ramdocs-sample", "--limit", "0"], "--limit must be at least 1"),
                          (["eval", "--dataset", "ramdocs-sample", "--limit", "-1"], "--limit must be at least 1"),
                          (["eval", "--dataset", "ramdocs-sample", "--set", "llm.structured_stages.corg.generat=on"],
                           "llm.structured_stages.corg.generat: no stage has this name")]:
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and message in refused.output, args

    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])

    def broken(self, question, k=None):
        raise ValueError("a bug, not the user's fault")

    monkeypatch.setattr("tanglerag.stages.retrieve.IndexRetriever.retrieve", broken)
    bug = runner.invoke(app, ["ask", "q?", "--index", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])
    assert bug.exit_code == 1 and isinstance(bug.exception, ValueError)  # not swallowed as a user error


def test_trace_show_rejects_files_without_a_trace(tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"question": "q", "answer": "a"}))
    result = runner.invoke(app, ["trace", "show", str(plain)])
    assert result.exit_code == 2 and "holds no trace" in result.output
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not json at all")
    assert "neither JSON nor JSON lines" in runner.invoke(app, ["trace", "show", str(garbage)]).output


def test_diva_ask_prints_the_grade_and_eval_scores_long_answers(tmp_path, corpus):
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])

    def reply(body: dict) -> str:
        system = body["messages"][0]["content"]
        if system.startswith("A question can be ambiguous"):
            return "Reason: several countries.\nTypes: subject"
        if system.startswith("You rewrite"):
            return "1: What is the capital of Italy?\n2: What is the capital of France?"
        if system.startswith("You check"):
            return "1: yes\n2: no"
        if system.startswith("You read a text"):  # the D-F1 reader
            return "Rome"
        return "1: What is the capital of Italy? -> Rome [1]\nAnswer: The capital of Italy is Rome [1]."

    with fake_openai_server(reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
               "--set", f"cache_dir={tmp_path}",
               "--set", "llm.structured_stages={}"]  # text replies scripted above (JSON: tests/methods/test_diva.py)
        asked = runner.invoke(app, ["ask", "What is the capital?", "--index", str(tmp_path / "idx"),
                                    "--method", "diva", "--top-k", "2", *llm])
        assert asked.exit_code == 0, asked.output
        assert "retrieval: PartialUseful — 1 of 2 interpretations covered" in asked.output
        traced = runner.invoke(app, ["ask", "What is the capital?", "--index", str(tmp_path / "idx"),
                                     "--method", "diva", "--top-k", "2", "--json", "--trace", *llm])
        shown = runner.invoke(app, ["trace", "show", "-"], input=traced.stdout)
        assert "diva (mode rag, grade PartialUseful)" in shown.output
        assert "covers What is the capital of France?: no" in shown.output
        evaluated = runner.invoke(app, ["eval", "--dataset", "asqa-sample", "--methods", "vanilla-rag,diva",
                                        "--limit", "2", "--scope", "pooled", "--json", *llm])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    metrics = report["results"][1]["metrics"]
    assert list(metrics) == ["rouge_l", "d_f1", "mrecall@5", "dr"]
    assert 0 < metrics["rouge_l"] < 1 and metrics["dr"] == pytest.approx((metrics["rouge_l"] * metrics["d_f1"]) ** 0.5)


def test_eval_of_a_dataset_without_passages_retrieves_from_an_index(tmp_path, corpus):
    """SituatedQA records carry no passages: `eval --index` answers them from a corpus the user indexed."""
    runner.invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx"), "--set", f"cache_dir={tmp_path}"])
    rows = [{"question": "what is the capital", "id": 1, "edited_question": "what is the capital of italy",
             "location": "italy", "answer": ["Rome"]},
            {"question": "what is the capital", "id": 1, "edited_question": "what is the capital of germany",
             "location": "germany", "answer": ["Berlin"]}]
    dataset = tmp_path / "situated.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        return "The capital of Italy is Rome [1]; of Germany, Berlin [2]." if "Rome is" in prompt else "unknown"

    with fake_openai_server(reply) as server:
        llm = ["--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
               "--set", f"cache_dir={tmp_path}"]
        without = runner.invoke(app, ["eval", "--dataset", str(dataset), "--methods", "vanilla-rag", *llm])
        assert without.exit_code == 2 and "--index" in without.output
        evaluated = runner.invoke(app, ["eval", "--dataset", str(dataset), "--methods", "vanilla-rag", "--index",
                                        str(tmp_path / "idx"), "--top-k", "3", "--metrics", "situated_f1",
                                        "--out", str(tmp_path / "run"), "--json", *llm])
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    assert report["n"] == 1 and report["results"][0]["metrics"]["situated_f1"] == 1.0
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()[0])
    assert set(row["passage_ids"]) == {"fr", "de", "it"}


def test_eval_resumes_from_its_out_folder_and_shows_progress_lines(tmp_path):
    with fake_openai_server(lambda body: "unknown") as server:
        common = ["eval", "--dataset", "ramdocs-sample", "--methods", "concat", "--limit", "3", "--out",
                  str(tmp_path / "run"), "--set", "llm.backend=openai", "--set", f"llm.base_url={server['base_url']}",
                  "--set", "llm.cache=false", "--concurrency", "2"]
        first = runner.invoke(app, [*common, "--head", "2", "--quiet"])
        assert first.exit_code == 0, first.output
        assert "eval:" not in first.output and server["requests"] == 2
        second = runner.invoke(app, common)
    assert second.exit_code == 0, second.output
    assert server["requests"] == 3  # only the question the first run did not answer
    text = " ".join(second.output.split())
    assert "resuming: 2 of 3 questions already answered, 1 to go" in text
    assert "eval: 3/3 questions, 0 failed, 1 calls" in text and "ETA" in text  # not a terminal: plain lines
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 3
