from pathlib import Path

import pytest
import yaml

from tanglerag.config import ConfigError
from tanglerag.family import families
from tanglerag.settings import Settings


def test_defaults_use_embedded_model_and_minilm():
    s = Settings.load()
    assert s.llm.backend == "llamacpp"
    assert s.llm.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert s.embedding.model == "all-MiniLM-L6-v2"
    assert s.index.index_type == "flat"


def test_yaml_then_overrides_win(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm:\n  temperature: 0.5\n  max_tokens: 64\nretrieval:\n  top_k: 3\n")
    s = Settings.load(cfg, ["llm.temperature=0.2", "index.index_type=hnsw", "index.bm25=true"])
    assert s.llm.temperature == 0.2
    assert s.llm.max_tokens == 64
    assert s.retrieval.top_k == 3
    assert s.index.index_type == "hnsw" and s.index.bm25 is True


def test_round_trip_through_yaml(tmp_path: Path):
    s = Settings.load(overrides=["llm.backend=openai", "llm.model=gpt-4o-mini", f"cache_dir={tmp_path}"])
    path = tmp_path / "out.yaml"
    path.write_text(yaml.safe_dump(s.model_dump(mode="json")))  # what eval's results.json keeps
    assert Settings.load(path) == s


@pytest.mark.parametrize("override, fragment", [
    ("llm.tempreature=0.1", "tempreature"),
    ("index.index_type=annoy", "index_type"),
    ("nonsense", "section.key=value"),
    ("retrieval.top_k=many", "top_k"),
    ("retrieval.top_k=0", "top_k"),
    ("retrieval.top_k=true", "top_k"),
    ("llm.max_tokens=-5", "max_tokens"),
    ("index.chunk_overlap=-1", "chunk_overlap"),
])
def test_bad_overrides_name_the_problem(override: str, fragment: str):
    with pytest.raises(ConfigError, match=fragment):
        Settings.load(overrides=[override])


def test_bad_yaml_file(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("llm: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        Settings.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        Settings.load(tmp_path / "missing.yaml")


def test_structured_outputs_take_on_and_off_though_yaml_reads_them_as_booleans():
    assert [Settings.load(overrides=[f"llm.structured={v}"]).llm.structured for v in ("on", "off", "auto")] == \
        ["on", "off", "auto"]
    with pytest.raises(ConfigError, match="llm.structured"):
        Settings.load(overrides=["llm.structured=maybe"])
    defaults = Settings().llm.structured_stages  # each family's own entries, e.g. what measured better with JSON
    assert {key: defaults[key] for key in ("pf+concat", "diva", "corg")} == {
        "pf+concat": "auto", "diva": "auto", "corg": {"generate": "auto", "organize": "repair"}}
    assert all(defaults[key] == mode for family in families() for key, mode in family.structured.items())
    by_method = Settings.load(overrides=["llm.structured_stages.corg.generate=on", "llm.structured_stages.diva=off"])
    assert by_method.llm.structured_stages == {"corg": {"generate": "on"}, "diva": "off"}
    staged = Settings.load(overrides=["llm.structured_stages.organize=on", "llm.structured_stages.judge=repair"])
    assert staged.llm.structured_stages == {"organize": "on", "judge": "repair"} and staged.llm.structured == "off"
    assert Settings.load(overrides=["llm.structured_stages={}"]).llm.structured_stages == {}
    with pytest.raises(ConfigError, match="structured_stages"):
        Settings.load(overrides=["llm.structured_stages.judge=maybe"])


def test_a_person_gets_a_whole_answer_budget_and_an_evaluation_the_papers():
    from tanglerag.settings import Settings

    person = Settings.load()
    assert person.methods.answer_tokens == 256 and person.evaluating().methods.answer_tokens == 32
    assert Settings.load(overrides=["methods.answer_tokens=64"]).evaluating().methods.answer_tokens == 64  # as set
    assert Settings.load(overrides=["eval.answer_tokens=16"]).evaluating().methods.answer_tokens == 16
