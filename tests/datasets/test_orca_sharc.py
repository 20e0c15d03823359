import json
import re

import pytest

from tanglerag.datasets.base import DatasetError
from tanglerag.datasets.orca_sharc import OrcaBuilder, judge_decision, load_orca, load_snippets, write_orca
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.structured import numbered_values
from tanglerag.testing import CannedBackend, HashEmbedder


def _records(tmp_path, n_extra=14):
    rows = [{"utterance_id": "u0", "question": "Can I get Winter Fuel Payment?", "scenario": "I live in the Alps.",
             "gold_snippet_id": "7", "source_url": "https://gov.uk/wfp"},
            {"utterance_id": "u1", "question": "Is this rate for me?", "scenario": "",
             "gold_snippet_id": "8", "source_url": "https://gov.uk/wage"},
            {"utterance_id": "u2", "question": "Can I get Winter Fuel Payment?", "scenario": "I was born in 1940.",
             "gold_snippet_id": "7", "source_url": "https://gov.uk/wfp"}]
    rows += [{"utterance_id": f"x{i}", "question": "q", "scenario": f"Statement number {i}.",
              "gold_snippet_id": "1", "source_url": f"https://gov.uk/page{i}"} for i in range(n_extra)]
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def verdicts(conflicting: set[int]):
    """A judge that answers every listed candidate, marking the given positions as conflicts."""
    def respond(messages):
        n = len(re.findall(r"^\d+\. ", messages[-1].content, re.MULTILINE))
        return "\n".join(f"{i}: {'conflict' if i in conflicting else 'ok'}" for i in range(1, n + 1))
    return CannedBackend(responder=respond)


def _conflicts(text: str, n: int) -> set[int] | None:
    """The judge's text reply read as the builder reads it: None unless every candidate has a verdict."""
    found = numbered_values(judge_decision("known", ["c"] * n).parse_text(text), "candidate", list(range(1, n + 1)))
    return {i for i, verdict in found.items() if verdict == "conflict"} if len(found) == n else None


def test_judgment_lines_are_read_leniently_and_need_every_verdict():
    assert _conflicts("1. ok\n2. conflict\n3: OK", 3) == {2}
    assert _conflicts("1 - ok\n2 **conflict**\n3) contradicts", 3) == {2, 3}
    assert _conflicts("1, 2, 3", 3) is None  # a bare list of numbers is not a verdict
    assert _conflicts("1: ok\n2: ok", 3) is None  # every candidate needs a verdict


def test_judgment_as_json_has_a_required_verdict_per_candidate():
    decision = judge_decision("known", ["a", "b"])
    schema = decision.json_params(GenerationParams()).json_schema
    assert schema["required"] == ["candidate_1", "candidate_2"]
    assert schema["properties"]["candidate_2"]["enum"] == ["ok", "conflict"]
    assert decision.read_json('{"candidate_1": "ok", "candidate_2": "conflict"}').candidate_2 == "conflict"


def test_builds_ten_non_contradicting_contexts(tmp_path, llm_factory):
    # the judge rejects every candidate listed as 1 or 2 in its batch
    builder = OrcaBuilder(llm_factory(verdicts({1, 2})), n_contexts=10, batch=12, seed=3)
    examples, manifest = builder.build(_records(tmp_path), limit=3)
    first = examples[0]
    assert len(first.contexts) == 10 and first.contexts[first.gold_context] == "I live in the Alps."
    assert "I was born in 1940." not in first.contexts  # same source page: prefiltered
    assert len(set(first.contexts)) == 10
    assert examples[1].gold_context is None and len(examples[1].contexts) == 10  # no scenario: random draw
    assert manifest.examples == 3 and manifest.seed == 3 and manifest.llm_calls == 2
    again, _ = OrcaBuilder(llm_factory(verdicts({1, 2})), seed=3).build(_records(tmp_path), limit=3)
    assert [e.contexts for e in again] == [e.contexts for e in examples]  # seeded and cached


def test_utterances_sharing_a_scenario_share_one_judged_draw(tmp_path, llm_factory):
    path = _records(tmp_path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows.insert(1, dict(rows[0], utterance_id="u0b", question="How much is it?"))
    path.write_text("\n".join(json.dumps(r) for r in rows))
    examples, manifest = OrcaBuilder(llm_factory(verdicts({1})), seed=1).build(path, limit=2)
    assert manifest.llm_calls == 1
    assert sorted(examples[0].contexts) == sorted(examples[1].contexts)
    assert examples[1].contexts[examples[1].gold_context] == "I live in the Alps."


def test_fewer_contexts_when_not_enough_fit(tmp_path, llm_factory):
    builder = OrcaBuilder(llm_factory(verdicts(set(range(1, 20)))), seed=0)
    examples, manifest = builder.build(_records(tmp_path, n_extra=5), limit=1)
    assert examples[0].contexts == ["I live in the Alps."] and manifest.short_sets == 1


def test_round_trip_and_errors(tmp_path, llm_factory):
    examples, manifest = OrcaBuilder(llm_factory(verdicts(set()))).build(_records(tmp_path), limit=2)
    write_orca(tmp_path / "orca", examples, manifest)
    assert load_orca(tmp_path / "orca") == examples
    assert json.loads((tmp_path / "orca" / "manifest.json").read_text())["model"] == "canned-v1"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"utterance_id": "u", "question": "q"}\n')
    with pytest.raises(DatasetError, match="missing field 'scenario'"):
        OrcaBuilder(llm_factory(CannedBackend())).build(bad)
    (tmp_path / "snip.json").write_text('{"10": "b", "2": "a"}')
    assert load_snippets(tmp_path / "snip.json") == (["2", "10"], ["a", "b"])


def test_embedding_prefilter_judges_only_candidates_near_the_gold(tmp_path, llm_factory):
    path = _records(tmp_path, n_extra=12)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows.append({"utterance_id": "near", "question": "q", "scenario": "I live in the Alps of France.",
                 "gold_snippet_id": "1", "source_url": "https://gov.uk/alps"})
    path.write_text("\n".join(json.dumps(r) for r in rows))
    backend = verdicts({1})  # whatever it is shown first is a conflict
    examples, manifest = OrcaBuilder(llm_factory(backend), seed=2, embedder=HashEmbedder(),
                                     judge_above=0.6).build(path, limit=1)
    assert manifest.llm_calls == 1 and manifest.candidates_judged == 1 and manifest.candidates_rejected == 1
    assert "I live in the Alps of France." in backend.requests[0][0][-1].content
    assert "I live in the Alps of France." not in examples[0].contexts and len(examples[0].contexts) == 10
    assert manifest.embedding_model == "hash-64" and manifest.candidates_seen >= 12
