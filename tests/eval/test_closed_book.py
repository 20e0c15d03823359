from tanglerag.datasets.base import QAExample
from tanglerag.eval.closed_book import filter_closed_book
from tanglerag.testing import CannedBackend


def test_drops_only_questions_answered_right_without_context(llm_factory):
    examples = [QAExample(id="1", question="Capital of France?", answers=["Paris"]),
                QAExample(id="2", question="Population of Pilzno?", answers=["4,411"]),
                QAExample(id="3", question="Who directed Lahu Ke Do Rang?", answers=["Mahesh Bhatt"])]
    backend = CannedBackend([("France", "Paris"), ("Pilzno", "unknown"), ("Lahu", "Raj Kapoor")])
    kept = filter_closed_book(llm_factory(backend), examples)
    assert [ex.id for ex in kept] == ["2", "3"]
    assert all("Context" not in msgs[-1].content and "Passages" not in msgs[-1].content
               for msgs, _ in backend.requests)
