"""A family is checked when it registers (and a broken plug-in is left out, not fatal); what the settings derive
from the families survives pickling, JSON and a family added later."""

import logging
import pickle
from importlib.metadata import EntryPoint

import pytest

from tanglerag.config import Section
from tanglerag.errors import ConfigError
from tanglerag.family import FAMILIES, Family, register_family
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.registry import DuplicateName, Registry
from tanglerag.settings import Settings


class _Knobs(Section):
    depth: int = 1


@pytest.fixture
def registered():
    """Families this test registers, taken out again after it."""
    added: list[str] = []

    def add(family: Family) -> Family:
        added.append(family.name)
        return register_family(family)

    yield add
    for name in added:
        if name in FAMILIES:  # a refused one never got in
            FAMILIES.remove(name)


def test_options_must_be_fields_of_the_family_section(registered):
    with pytest.raises(ConfigError, match="options its settings section does not have: breadth"):
        registered(Family(name="knobs", settings=_Knobs, options=("breadth",)))
    assert "knobs" not in FAMILIES


def test_a_metric_or_section_another_family_has_is_refused(registered):
    with pytest.raises(DuplicateName, match="both have a metric 'nm'"):
        registered(Family(name="twin", metrics={"nm": lambda answer, example: None}))
    with pytest.raises(DuplicateName, match="both have a section 'corg'"):
        registered(Family(name="twin2", settings=_Knobs, section="corg"))


def test_a_section_named_like_a_core_one_is_refused_when_settings_are_assembled(registered):
    registered(Family(name="shadow", settings=_Knobs, section="eval"))
    with pytest.raises(ConfigError, match="section is named 'eval', which the core settings use"):
        Settings()


def test_settings_pickle_as_values_even_after_a_family_is_added(registered):
    before = Settings.load(overrides=["corg.answer_tokens=50"])
    registered(Family(name="later", settings=_Knobs))
    again = pickle.loads(pickle.dumps(before))
    assert again.section(CorgConfig).answer_tokens == 50 and again.section(_Knobs).depth == 1


def test_json_and_the_schema_know_every_family_section():
    assert Settings.model_validate_json('{"corg": {"answer_tokens": 40}}').section(CorgConfig).answer_tokens == 40
    assert {"corg", "diva", "llm"} <= set(Settings.model_json_schema()["properties"])


def test_a_plugin_that_fails_to_load_is_left_out_with_one_line(monkeypatch, caplog):
    broken = EntryPoint(name="broken", value="tanglerag.no_such_module:FAMILY", group="tanglerag.tests")
    working = EntryPoint(name="fine", value="tanglerag.methods.concat.family:FAMILY", group="tanglerag.tests")
    monkeypatch.setattr("tanglerag.registry.entry_points", lambda group: [broken, working])
    table: Registry[object] = Registry("plug-in", group="tanglerag.tests")
    with caplog.at_level(logging.ERROR, logger="tanglerag.registry"):
        assert table.names() == ["fine"] and table.names() == ["fine"]
    assert "plug-in 'broken'" in caplog.text and "ModuleNotFoundError" in caplog.text


def test_every_built_in_method_implements_arun_and_answers_through_the_sync_facade():
    """The built-in families are async-native: each method implements ``arun`` and leaves ``run`` to the base
    class's facade (a plug-in may still implement ``run`` alone: tests/methods/test_plugin_method.py)."""
    from tanglerag.methods.base import Method, method_classes

    classes = method_classes()
    assert len(classes) >= 20
    for name, cls in classes.items():
        assert cls.arun is not Method.arun, f"{name} does not implement arun"
        assert cls.run is Method.run, f"{name} still implements run: arun is the contract, run its facade"
