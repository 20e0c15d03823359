import pytest

from tanglerag.datasets.base import QAExample
from tanglerag.datasets.disambig import disambiguations, split_entity, sub_question
from tanglerag.metrics.readers import LLMReader
from tanglerag.metrics.registry import compute
from tanglerag.testing import CannedBackend
from tanglerag.types import Answer

Q = "What sport is Bobby Carpenter associated with?"
EX = QAExample(id="q", question=Q, answers=["American football", "ice hockey"], metadata={"disambig": [
    d.model_dump() for d in disambiguations(
        Q, ["Bobby Carpenter (American football)", "Bobby Carpenter (ice hockey)"],
        ["American football", "ice hockey"])]})


def response(text):
    return Answer(question=Q, method="corg", text=text)


class TableReader:
    """Answers a sub-question by the line of the response that names its descriptor."""

    def read(self, text, question):
        for line in text.splitlines():
            if ("hockey" in question) == ("hockey" in line):
                return line.split(" (")[0]
        return ""


def test_disambiguation_from_entities():
    assert split_entity("Lahu Ke Do Rang (1979 film)") == ("Lahu Ke Do Rang", "1979 film")
    assert split_entity("Broken Bow, Nebraska") == ("Broken Bow", "Nebraska")
    assert sub_question("What is the population of Broken Bow?", "Broken Bow, Nebraska") == \
        "What is the population of Broken Bow, Nebraska?"
    assert sub_question("Who wrote it?", "Dune (novel)") == "Who wrote it (Dune (novel))?"
    assert disambiguations(Q, ["a", "b"], ["x"]) == []


def test_recall_metrics():
    full = response("American football (American football) [1]\nice hockey (ice hockey) [2]")
    assert compute(["ans", "ent", "ear"], full, EX) == {"ans": 1.0, "ent": 1.0, "ear": 1.0}
    half = response("ice hockey [2]")
    scores = compute(["ans", "ent", "ear"], half, EX)
    assert scores["ans"] == pytest.approx(0.5) and scores["ear"] == pytest.approx(0.5)
    answer_only = response("football")  # answer half-recalled, descriptor half-recalled
    assert compute(["ear"], answer_only, EX)["ear"] == pytest.approx(0.25 / 2)
    assert compute(["ans"], Answer(question=Q, method="corg", text="unknown", is_unknown=True), EX)["ans"] == 0.0


def test_d_f1_reads_each_sub_question():
    full = response("American football (American football) [1]\nice hockey (ice hockey) [2]")
    assert compute(["d_f1"], full, EX, TableReader())["d_f1"] == 1.0
    one = response("ice hockey (ice hockey) [2]")
    assert compute(["d_f1"], one, EX, TableReader())["d_f1"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="needs a QA reader"):
        compute(["d_f1"], full, EX)


def test_llm_reader_shares_the_response_prefix(llm_factory):
    backend = CannedBackend(rules=[("\\(ice hockey\\)", "ice hockey"), ("\\(American football\\)", "unknown")])
    reader = LLMReader(llm_factory(backend))
    text = "American football [1]\nice hockey [2]"
    assert reader.read(text, EX.metadata["disambig"][1]["sub_question"]) == "ice hockey"
    assert reader.read(text, EX.metadata["disambig"][0]["sub_question"]) == ""
    prompts = [m[-1].content for m, _ in backend.requests]
    assert prompts[0].startswith(f"Text: {text}") and prompts[1].startswith(f"Text: {text}")


def test_readings_without_a_descriptor_are_left_out_of_ent_and_ear():
    from tanglerag.datasets.disambig import Disambiguation
    from tanglerag.metrics.ambig import described_readings

    bare = Disambiguation(entity="Bobby Carpenter", descriptor="", answer="baseball", sub_question=Q)
    mixed = EX.model_copy(update={"metadata": {"disambig": [*EX.metadata["disambig"], bare.model_dump()]}})
    assert len(described_readings(mixed)) == 2
    unknown = Answer(question=Q, method="corg", text="unknown", is_unknown=True)
    assert compute(["ent", "ear"], unknown, mixed) == {"ent": 0.0, "ear": 0.0}  # was 1/3: "" is in every reply
    only_bare = EX.model_copy(update={"metadata": {"disambig": [bare.model_dump()]}})
    assert compute(["ent", "ear"], response("baseball"), only_bare) == {"ent": None, "ear": None}


def test_an_unknown_response_scores_zero_on_every_metric():
    unknown = Answer(question=Q, method="corg", text="unknown", is_unknown=True)
    scores = compute(["em", "f1", "ans", "ent", "ear", "d_f1"], unknown, EX, TableReader())
    assert scores == {"em": 0.0, "f1": 0.0, "ans": 0.0, "ent": 0.0, "ear": 0.0, "d_f1": 0.0}


def test_situated_f1_scores_coverage_of_the_contexts_answers():
    from tanglerag.datasets.disambig import Disambiguation
    from tanglerag.types import AnswerPart

    readings = [Disambiguation(entity="", descriptor="2015", answer="Germany", sub_question="as of 2015"),
                Disambiguation(entity="", descriptor="2019", answer="France", aliases=["Les Bleus"],
                               sub_question="as of 2019")]
    ex = QAExample(id="s", question="who won the world cup", answers=["Germany", "France"],
                   metadata={"disambig": [r.model_dump() for r in readings]})
    both = Answer(question="q", method="diva", text="Germany won in 2014; France in 2018.")
    assert compute(["situated_f1"], both, ex)["situated_f1"] == 1.0
    parts = Answer(question="q", method="diva", text="x", parts=[
        AnswerPart(answer="Germany", descriptor="2015"), AnswerPart(answer="Brazil", descriptor="2002")])
    assert compute(["situated_f1"], parts, ex)["situated_f1"] == pytest.approx(0.5)  # P 1/2, R 1/2
    unknown = Answer(question="q", method="diva", text="unknown", is_unknown=True)
    assert compute(["situated_f1"], unknown, ex)["situated_f1"] == 0.0
    assert compute(["situated_f1"], both, EX.model_copy(update={"metadata": {}}))["situated_f1"] is None
