"""Issue 69, tokens as they come: every method answers a watched question (one a terminal or a stream hears) exactly as
an unwatched one, and the methods whose last step is a model call stream that call's text as it is written."""

import pytest

from tanglerag.family import families
from tanglerag.runtime import AskRequest
from tanglerag.settings import Settings
from tanglerag.testing import canned_runtime
from tanglerag.tracking import Tracker
from tanglerag.types import Passage, Question, RetrievedPassage

HITS = [RetrievedPassage(passage=Passage(id=f"p{i}", title="Leave", text=text), score=1.0, rank=i)
        for i, text in enumerate(["Staff take twenty days of leave a year.", "Leave is twenty days, the notes say.",
                                  "Green tea is steeped at eighty degrees."], 1)]
METHODS = sorted({name for family in families() for name in family.method_names()} - {"diva-oracle"})
STREAMING = {"concat", "corg", "diva", "pf+concat"}
"""Methods whose answer is one model call's text (or, for COrg, its last calls'), streamed as it is written."""


@pytest.mark.parametrize("method", METHODS)
def test_a_watched_question_is_answered_as_an_unwatched_one(tmp_path, method):
    settings = Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "auto.entity_signals=false",
                                        "llm.structured_stages={}"])
    ask = AskRequest(question=Question(text="How many days of leave?"), method=method, passages=HITS)
    plain = canned_runtime(settings, default="twenty days [1]").answer(ask)
    heard: list[str] = []
    tracker = Tracker(on_event=lambda e: heard.append(e.data["text"]) if e.type == "token" else None)
    watched = canned_runtime(settings, default="twenty days [1]").answer(ask.model_copy(update={"tracker": tracker}))
    assert watched.text == plain.text and watched.citations == plain.citations
    if method in STREAMING:
        assert len(heard) > 1 and "twenty" in "".join(heard)  # a word at a time, as the canned model streams
