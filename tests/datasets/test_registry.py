import json

import pytest

from tanglerag.datasets.base import DatasetError
from tanglerag.datasets.registry import detect_format, load_dataset


def test_bundled_ramdocs_sample():
    name, examples = load_dataset("ramdocs-sample")
    assert name == "ramdocs-sample" and len(examples) == 20
    first = examples[0]
    assert first.question == "What is the population of Broken Bow?"
    assert first.answers == ["3,559 people"]
    assert [p.metadata["type"] for p in first.passages] == ["correct", "correct", "noise"]
    assert first.metadata["wrong_answers"] == ["10,000 people"]
    assert len(load_dataset("ramdocs-sample", limit=3)[1]) == 3


def test_bundled_sample_holds_two_answer_questions_and_the_corpus_matches_it():
    """The demo needs tangled questions: ten of the twenty name two same-name entities, with misinformation and noise."""
    from pathlib import Path

    import tanglerag

    _, examples = load_dataset("ramdocs-sample")
    two = [ex for ex in examples if len(ex.answers) == 2]
    assert len(two) == 10 and all(len(ex.metadata["disambig_entity"]) == 2 for ex in two)
    assert all({"misinfo", "noise"} <= {p.metadata["type"] for p in ex.passages} for ex in two)
    # tangle kinds name what the run browser filters by: two answers, and RAMDocs' own passage labels
    assert all(ex.tangles == ["ambiguous", "misinformation", "noise"] for ex in two)
    assert examples[0].tangles == ["noise"] and examples[2].tangles == ["misinformation", "noise"]
    corpus = Path(tanglerag.__file__).parent / "sample_data" / "sample_corpus.jsonl"
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    assert [(r["source_question"], r["text"], r["doc_type"]) for r in rows] == [
        (q, p.text, p.metadata["type"]) for q, ex in enumerate(examples) for p in ex.passages]
    assert len({r["id"] for r in rows}) == len(rows)


def test_seeded_sample_keeps_file_order_and_is_reproducible():
    everything = [ex.id for ex in load_dataset("ramdocs-sample")[1]]
    first = [ex.id for ex in load_dataset("ramdocs-sample", sample=5, seed=1)[1]]
    assert first == [ex.id for ex in load_dataset("ramdocs-sample", sample=5, seed=1)[1]]
    assert len(set(first)) == 5 and first == sorted(first, key=everything.index)
    assert first != [ex.id for ex in load_dataset("ramdocs-sample", sample=5, seed=2)[1]]
    with pytest.raises(DatasetError, match="has 20 examples"):
        load_dataset("ramdocs-sample", sample=21)
    for bad in (0, -3):
        with pytest.raises(DatasetError, match="at least 1"):
            load_dataset("ramdocs-sample", sample=bad)
    with pytest.raises(DatasetError, match="not both"):
        load_dataset("ramdocs-sample", limit=3, sample=3)


def test_ramdocs_format_file_is_detected(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"question": "Q?", "documents": [{"text": "t", "type": "correct", "answer": "a"}],
                                "gold_answers": ["a"], "wrong_answers": [], "disambig_entity": []}) + "\n")
    assert detect_format(path) == "ramdocs"
    assert load_dataset(str(path))[1][0].passages[0].text == "t"


def test_generic_qa_variants(tmp_path):
    path = tmp_path / "nq.jsonl"
    rows = [{"question": "q1", "answers": ["a", "b"], "ctxs": [{"title": "T", "text": "x", "id": "w1"}]},
            {"question": "q2", "answer": "c", "passages": ["plain text passage"], "tangles": ["same-name"]},
            {"question": "q3", "answers": ["d"], "wrong_answers": ["e"], "source": "mine",
             "passages": [{"text": "y", "type": "noise"}]}]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    name, examples = load_dataset(str(path))
    assert name == "nq"
    assert examples[0].passages[0].id == "w1" and examples[0].passages[0].title == "T"
    assert examples[1].answers == ["c"] and examples[1].passages[0].text == "plain text passage"
    assert examples[0].tangles == [] and examples[1].tangles == ["same-name"]
    assert examples[2].metadata == {"wrong_answers": ["e"], "source": "mine"} and examples[0].metadata == {}
    assert examples[2].passages[0].metadata == {"type": "noise"}  # what noise_cited reads


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(DatasetError, match="neither a registered dataset"):
        load_dataset(str(tmp_path / "nope.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answers": ["a"]}\n{oops\n')
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2: invalid JSON"):
        load_dataset(str(bad))
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"query": "q"}\n')
    with pytest.raises(DatasetError, match="cannot tell the format.*--format"):
        load_dataset(str(odd))
    missing = tmp_path / "missing_answers.jsonl"
    missing.write_text('{"question": "q", "documents": [{"text": "t"}]}\n')
    with pytest.raises(DatasetError, match="missing field 'gold_answers'"):
        load_dataset(str(missing), fmt="ramdocs")
