"""The LLM-free CMD judge on hand-made sentences (real spaCy parses, the hashing embedder for nouns)."""

import pytest

from tanglerag.methods.cdit.cmd_parse import SpacyJudge
from tanglerag.testing import HashEmbedder

pytestmark = pytest.mark.xdist_group("spacy")  # the tests that load the spaCy pipeline share a worker: one load


@pytest.fixture(scope="module")
def judge():
    return SpacyJudge(HashEmbedder(), threshold=0.95)


def test_opposite_particles_and_other_verbs_do_not_match(judge):
    passages = ["Jack switched on the radio in the kitchen.", "Tom switched off the radio.", "The radio is old."]
    assert judge.judge("phi1", "Who switched on the radio?", passages) == [True, False, False]


def test_negation_and_subjects(judge):
    passages = ["Anna did not win the race.", "Anna won the race.", "Bob won the race."]
    assert judge.judge("phi1", "Did Anna win the race?", passages) == [False, True, False]


def test_copulas_compare_their_nouns_in_either_order(judge):
    passages = ["Paris is the capital.", "The capital is Paris.", "Lyon is a city."]
    assert judge.judge("phi1", "Is Paris the capital?", passages) == [True, True, False]


def test_phi2_also_checks_modifiers(judge):
    passages = ["Anna won the race in 2019.", "Anna won the race in 2021."]
    assert judge.judge("phi1", "Who won the race in 2019?", passages) == [True, True]
    assert judge.judge("phi1+phi2", "Who won the race in 2019?", passages) == [True, False]


def test_a_question_without_a_verb_is_left_undecided(judge):
    assert judge.judge("phi1", "Radio?", ["Jack switched on the radio."]) == [None]
