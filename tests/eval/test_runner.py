import gc
import json

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.report import _format_metric, markdown_table, write_outputs
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.trace import Trace


def _runner(llm, embedder):
    return EvalRunner(Runtime(Settings.load(overrides=["retrieval.top_k=2"]), llm=llm, embedder=embedder))


def test_scores_usage_and_cached_rerun(llm_factory, embedder, tmp_path):
    backend = CannedBackend([("Broken Bow", "3,559 people [1]"), ("Bobby Carpenter", "American football [2]")])
    _, examples = load_dataset("ramdocs-sample", limit=3)
    report, predictions = _runner(llm_factory(backend), embedder).run("ramdocs-sample", examples, ["concat"])
    result = report.results[0]
    assert report.n == 3 and result.method == "concat"
    assert result.metrics["em"] == 2 / 3 and result.metrics["unk"] == 1 / 3
    assert result.usage["llm_calls"] == 1.0 and result.usage["prompt_tokens"] > 0
    assert predictions[0].citations and predictions[0].usage_by_stage["retrieve"]["seconds"] > 0
    # each question was answered from its own top-2 documents
    assert all(c.startswith("ramdocs-0000-d") for c in predictions[0].citations)
    first_prompt = backend.requests[0][0][-1].content
    assert "[2]" in first_prompt and "[3]" not in first_prompt
    own_texts = {p.text[:40] for p in examples[0].passages}
    assert sum(t in first_prompt for t in own_texts) == 2

    rerun, _ = _runner(llm_factory(backend), embedder).run("ramdocs-sample", examples, ["concat"])
    assert rerun.results[0].usage["llm_calls"] == 0 and rerun.results[0].usage["cached_calls"] == 1.0
    assert rerun.results[0].metrics == result.metrics
    assert len(backend.requests) == 3

    write_outputs(tmp_path / "out", report, predictions)
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["dataset"] == "ramdocs-sample" and saved["results"][0]["metrics"]["em"] == 2 / 3
    assert Settings.model_validate(saved["settings"]).retrieval.top_k == 2  # the run's own config, reloadable
    lines = (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 3
    trace = Trace.model_validate(json.loads(lines[0])["trace"])  # the whole typed trace, read back
    assert trace.calls[0].stage == "generate" and trace.calls[0].messages[-1].content == first_prompt
    table = markdown_table(report)
    assert "| concat | 66.7 [0.0, 100.0] | 66.7 [0.0, 100.0] | 33.3 | - | 0.0 | 66.7 |" in table
    assert rerun.results[0].usage["model_seconds"] == result.usage["model_seconds"] > 0
    assert _format_metric("accuracy", 0.54, (0.4, 0.68)) == "54.0 [40.0, 68.0]"  # a rate like EM, not 0.540
    assert report.results[0].metrics["nm"] is None  # concat has no answer pool


def test_the_objects_alive_before_a_run_are_left_out_of_collections_while_it_goes(llm_factory, embedder):
    seen, threshold = [], gc.get_threshold()
    backend = CannedBackend(responder=lambda messages: seen.append((gc.get_freeze_count(), gc.get_threshold()))
                            or "unknown")
    _, examples = load_dataset("ramdocs-sample", limit=2)
    _runner(llm_factory(backend), embedder).run("ramdocs-sample", examples, ["concat"])
    assert seen and all(count > 0 for count, _ in seen) and gc.get_freeze_count() == 0  # handed back after the run
    # young collections rarer meanwhile (what they walk is mostly what lives on), the threshold handed back after
    assert all(during[0] >= 10_000 and during[1:] == threshold[1:] for _, during in seen)
    assert gc.get_threshold() == threshold
    gc.freeze()  # frozen by someone else (a server before it forks): theirs to unfreeze
    try:
        _runner(llm_factory(CannedBackend()), embedder).run("ramdocs-sample", examples, ["concat"])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_head_answers_a_subset_against_the_whole_pool(llm_factory, embedder):
    from tanglerag.types import Passage

    _, examples = load_dataset("ramdocs-sample", limit=2)
    # the second question's passages restate the first question: only a pool with both can retrieve them
    decoy = examples[1].model_copy(update={"passages": [Passage(id="decoy", text=examples[0].question * 3)]})
    settings = Settings.load(overrides=["retrieval.top_k=3", "eval.passage_scope=pooled"])
    runner = EvalRunner(Runtime(settings, llm=llm_factory(CannedBackend(default="unknown")), embedder=embedder))
    report, predictions = runner.run("x", examples[:1], ["concat"], pool=[examples[0], decoy])
    assert report.n == 1 and report.protocol["pooled_questions"] == 2
    assert "decoy" in predictions[0].passage_ids
    _, alone = runner.run("x", examples[:1], ["concat"])
    assert "decoy" not in alone[0].passage_ids
