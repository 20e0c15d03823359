"""The ledger's policies as a person means them, on canned claims: an amendment supersedes the text it amends
whatever undated rumour stands beside it; a dated, named source outranks an anonymous undated one; the answer leads
with what the evidence favours and names what it set aside and why; only an explicit "as of" sets a moment; claims
of passages about another question compete for nothing."""

import json
from datetime import date

from tanglerag.conflicts import ConflictStep
from tanglerag.methods.base import make_method
from tanglerag.methods.ledger.moment import as_of, timeless
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.text import asserted_text
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources

ALLOWANCE = Question(text="What is the yearly travel allowance?")
FOLDER = {  # id: (text, metadata, (quote, answer, about)) - the notes folder
    "policy-2022.md": ("Travel policy. Each employee has a yearly travel allowance of 5,000 dollars.",
                       {"date": "2022-01-10", "source": "HR handbook"},
                       ("a yearly travel allowance of 5,000 dollars", "5,000 dollars", "the yearly travel allowance")),
    "policy-2024.md": ("Travel policy, amended. Each employee has a yearly travel allowance of 6,500 dollars.",
                       {"date": "2024-03-01", "source": "HR handbook"},
                       ("a yearly travel allowance of 6,500 dollars", "6,500 dollars", "the yearly travel allowance")),
    "forum.md": ("Someone on the forum says the yearly travel allowance is 9,000 dollars now.",
                 {"source": "staff forum"},
                 ("the yearly travel allowance is 9,000 dollars", "9,000 dollars", "the travel allowance")),
}


def canned(folder: dict) -> CannedBackend:
    def respond(messages):
        document = messages[-1].content.split("Document: ", 1)[1].split("\n\nQuestion:", 1)[0]
        quote, answer, about = next(claim for text, _, claim in folder.values() if text == document)
        return json.dumps({"quote": quote, "answer": answer, "about": about})
    return CannedBackend(responder=respond, structured=True)


def ask(llm_factory, folder: dict, question: Question = ALLOWANCE, *overrides: str):
    llm = llm_factory(canned(folder), persistent=False)
    llm.structured = "on"
    passages = [Passage(id=pid, text=text, metadata=meta) for pid, (text, meta, _) in folder.items()]
    answer = make_method("ledger", resources(llm, Settings.load(overrides=list(overrides)))).answer(
        question, as_retrieved(passages))
    return answer, answer.trace.find(ConflictStep)


def notes(step: ConflictStep) -> dict[str, tuple[str, str]]:
    return {side.answer: (side.verdict, side.note) for report in step.reports for side in report.sides}


def test_an_amendment_supersedes_the_text_it_amends_and_a_dated_source_outranks_an_undated_rumour(llm_factory):
    answer, step = ask(llm_factory, FOLDER)
    lines = answer.text.splitlines()
    assert lines[0] == "6,500 dollars (the yearly travel allowance) [2]"
    assert lines[1:] == [
        ("Set aside: 5,000 dollars (the yearly travel allowance): outdated: HR handbook 2022-01-10, superseded by its "
         "2024-03-01 [1]"),
        "Set aside: 9,000 dollars (the travel allowance): unverified; staff forum, undated [3]"]
    assert asserted_text(answer.text) == lines[0] and [p.answer for p in answer.parts] == ["6,500 dollars"]
    assert notes(step)["5,000 dollars"][0] == notes(step)["9,000 dollars"][0] == "rejected"
    report = step.reports[0]
    assert [t.policy for t in report.trials] == ["supersede", "corrections", "releases", "register", "newest",
                                                 "authority", "witnesses", "provenance"]
    assert report.trials[0].outcome == "HR handbook: 2024-03-01 supersedes the rest"
    assert report.rule == ("HR handbook: 2024-03-01 supersedes the rest; "  # every policy that set a side aside
                           "provenance HR handbook, 2024-03-01 vs staff forum, undated")


def test_asked_as_of_a_year_the_version_valid_then_leads(llm_factory):
    answer, step = ask(llm_factory, FOLDER, Question(text="What is the yearly travel allowance as of 2023?"))
    assert answer.text.splitlines()[0] == "5,000 dollars (the yearly travel allowance) [1]"
    assert notes(step)["6,500 dollars"] == ("rejected", "dated after 2023")
    assert notes(step)["9,000 dollars"] == ("rejected", "unverified")
    assert step.reports[0].trials[0].outcome == "HR handbook: 2022-01-10 in force as of 2023"


def test_without_the_amendment_the_rumour_is_still_not_asserted_over_the_handbook(llm_factory):
    answer, _ = ask(llm_factory, {k: v for k, v in FOLDER.items() if k != "policy-2024.md"})
    assert [p.answer for p in answer.parts] == ["5,000 dollars"]


def test_a_weaker_side_is_never_asserted_alone_while_a_stronger_one_is_held_back(llm_factory):
    undated = {pid: (text, {}, claim) for pid, (text, _, claim) in FOLDER.items()}
    undated["policy-2024.md"] = (FOLDER["policy-2022.md"][0].replace("5,000", "6,500"), {},
                                 FOLDER["policy-2024.md"][2])  # an undated edit of the same text
    answer, step = ask(llm_factory, undated)
    assert sorted(step.withheld) == ["5,000 dollars", "6,500 dollars", "9,000 dollars"]
    assert answer.is_unknown  # the versions disagree and the rumour is no stronger than either: nothing asserted


def test_only_an_explicit_as_of_sets_a_moment():
    assert as_of("Which country won the World Cup in 1998?") is None  # a year the question is about
    assert as_of("who won the 1998 final") is None and as_of("Who was president by 2004?") is None
    assert as_of("Who is the CEO as of 2021?").text == "2021"
    assert as_of("Who was mayor at the time of 12 May 2019?").text == "2019-05-12"
    month = as_of("Which release was current as of March 2023?")
    assert month.text == "2023-03" and str(month.last_day) == "2023-03-31"
    assert as_of("Who is the mayor now?") is None and as_of("What is the latest version?") is None
    assert timeless("Who is the CEO as of 2021?") == "Who is the CEO?"
    assert timeless("As of January 2024, what was the borrowing limit?") == "what was the borrowing limit?"
    assert timeless("Who won the World Cup in 1998?") == "Who won the World Cup in 1998?"


def test_a_year_in_the_question_is_content_so_a_newer_almanac_that_answers_it_is_not_hidden(llm_factory):
    folder = {
        "almanac-2018": ("Sports almanac 2018. France won the 1998 World Cup, beating Brazil 3-0 in the final.",
                         {"date": "2018-07-20", "source": "almanac"},
                         ("France won the 1998 World Cup", "France", "the 1998 World Cup")),
    }
    answer, _ = ask(llm_factory, folder, Question(text="Which country won the World Cup in 1998?"))
    assert [p.answer for p in answer.parts] == ["France"]


def test_a_passage_about_another_question_is_not_read_and_its_claim_would_compete_for_nothing(llm_factory):
    folder = {
        "game": ("Jurassic World Evolution, the Jurassic World game, is set for release on June 12, 2018.",
                 {"date": "2018-01-10"}, ("set for release on June 12, 2018", "June 12, 2018", "the game")),
        "album": ("Thomas Rhett's new album Center Point Road came out on May 31, 2019.",
                  {"date": "2019-05-31"}, ("came out on May 31, 2019", "May 31, 2019", "the new album")),
    }
    answer, step = ask(llm_factory, folder, Question(text="When is the new Jurassic World game coming out?"))
    assert [p.answer for p in answer.parts] == ["June 12, 2018"] and "May 31" not in answer.text
    assert [c.passage_id for c in step.claims] == ["game"] and step.off_topic == ["album"] and step.reports == []
    assert "album: not read (about another question)" in "\n".join(step.lines())
    assert answer.usage.total.total_calls == 1  # the game's claim only: the album's would compete for nothing
    every, every_step = ask(llm_factory, folder, Question(text="When is the new Jurassic World game coming out?"),
                            "ledger.relevance=0", "ledger.disabled_rules=[asked-names,scope]")
    album = next(c for c in every_step.claims if c.passage_id == "album")
    assert album.relevant and album.relevance == 0.0  # read when every passage may compete
    assert [p.answer for p in every.parts] == ["May 31, 2019"]  # the newer date of another topic wins: the old bug
    named, named_step = ask(llm_factory, folder, Question(text="When is the new Jurassic World game coming out?"),
                            "ledger.relevance=0", "ledger.disabled_rules=[]")  # the album's page does not name it
    assert [p.answer for p in named.parts] == ["June 12, 2018"]
    assert next(c for c in named_step.claims if c.passage_id == "album").dropped_by.startswith("asked-names")


def test_agreeing_sources_write_no_report(llm_factory):
    folder = {
        "a": ("The library opens at 9 am on weekdays.", {"source": "library site"},
              ("opens at 9 am on weekdays", "9 am", "the library's opening time")),
        "b": ("On weekdays the library's doors open at 9 am.", {"source": "city guide"},
              ("the library's doors open at 9 am", "9 am", "the library's opening time")),
    }
    answer, step = ask(llm_factory, folder, Question(text="When does the library open on weekdays?"))
    assert step.reports == [] and step.overall == "none" and answer.text == "9 am (the library's opening time) [1][2]"


def test_an_about_that_only_restates_the_question_tells_nothing_apart(llm_factory):
    """The 1.5B model titled the handbook's claims "Travel policy" and the forum's "the yearly travel allowance":
    different words, but the second names nothing the question does not, so the short notes stay one thing and the
    policies settle them (it was asserted beside the handbook as a "different thing")."""
    as_read = {pid: (text, meta, (quote, answer, "Travel policy" if pid.startswith("policy") else about))
               for pid, (text, meta, (quote, answer, about)) in FOLDER.items()}
    answer, step = ask(llm_factory, as_read)
    assert [p.answer for p in answer.parts] == ["6,500 dollars"] and len(step.reports) == 1


def test_abouts_naming_different_parts_the_question_joins_are_complementary(llm_factory):
    folder = {
        "lisbon": ("The Lisbon store opens at 10:00 on Sundays and closes at 18:00.", {"source": "stores page"},
                   ("opens at 10:00 on Sundays", "10:00", "Lisbon store")),
        "porto": ("On Sundays the Porto store opens at 11:00.", {"source": "stores page"},
                  ("the Porto store opens at 11:00", "11:00", "Porto store")),
    }
    answer, step = ask(llm_factory, folder, Question(text="When do the Lisbon and Porto stores open on Sundays?"))
    assert [p.answer for p in answer.parts] == ["10:00", "11:00"] and step.overall == "complementary"


def test_a_year_is_read_as_written_and_a_word_the_question_uses_adds_nothing():
    from tanglerag.methods.ledger.relevance import relevance

    assert relevance("Who won the 2018-19 Premier League?", "Manchester City won the 2018-19 Premier League.") == 1.0
    assert relevance("Who won the 2018-19 Premier League?", "Liverpool won the 2019-20 Premier League.") == 0.0


def test_the_stop_words_are_scikit_learns_read_without_importing_it(tmp_path, monkeypatch):
    """The list comes from scikit-learn's own file, loaded alone (importing the package cost every ask seconds); a
    release that moved or changed that file is read through the documented import."""
    import subprocess
    import sys

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from tanglerag.methods.ledger import relevance

    assert relevance._sklearn_stop_words() == ENGLISH_STOP_WORDS and "about" in relevance._stop_words()
    script = ("import sys; from tanglerag.methods.ledger.relevance import content_words; "
              "content_words('the price'); print('sklearn' in sys.modules)")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "False"
    changed = tmp_path / "_stop_words.py"
    changed.write_text("from sklearn.feature_extraction._gone import WORDS\n")
    for found in (None, changed):
        monkeypatch.setattr(relevance, "_stop_words_file", lambda found=found: found)
        assert relevance._sklearn_stop_words() == ENGLISH_STOP_WORDS


def test_versions_without_a_source_are_named_by_their_dates_and_each_side_by_its_own_numbers(llm_factory):
    versions = {"v1": (FOLDER["policy-2022.md"][0], {"date": "2022-01-10"}, FOLDER["policy-2022.md"][2]),
                "v2": (FOLDER["policy-2022.md"][0].replace("5,000", "6,500"), {"date": "2024-03-01"},
                       FOLDER["policy-2024.md"][2])}
    answer, step = ask(llm_factory, versions)
    assert notes(step)["5,000 dollars"] == ("rejected", ("outdated: the version of 2022-01-10, superseded by the "
                                                         "version of 2024-03-01"))
    assert step.reports[0].trials[0].outcome == "one document: 2024-03-01 supersedes the rest"
    rated = {pid: (text, {"authority": n}, claim)
             for (pid, (text, _, claim)), n in zip(FOLDER.items(), (2, 3, 0), strict=True)}
    _, trusted = ask(llm_factory, rated, ALLOWANCE, "ledger.policies=[authority, show-all]")
    assert notes(trusted)["5,000 dollars"] == ("rejected", "less trusted: authority 2 against 3")
    assert notes(trusted)["9,000 dollars"] == ("rejected", "less trusted: authority 0 against 3")


def test_an_about_that_describes_the_answer_itself_tells_nothing_apart(llm_factory):
    """Asked who holds a record, the model describes each holder ("Reggie Miller, a professional basketball
    player"): that names the answer, not a second thing asked about, so the two records compete and the newer wins."""
    folder = {
        "old": ("Reggie Miller held the record for the most three-point shots in the NBA.", {"date": "2005-06-01"},
                ("Reggie Miller held the record", "Reggie Miller", "Reggie Miller, a professional basketball player")),
        "new": ("Ray Allen now has the most three-point shots in NBA history.", {"date": "2011-02-10"},
                ("Ray Allen now has the most three-point shots", "Ray Allen", "Ray Allen")),
    }
    answer, step = ask(llm_factory, folder, Question(text="who made the most three point shots in the nba"))
    assert [p.answer for p in answer.parts] == ["Ray Allen"] and step.overall == "outdated"


def test_a_date_the_text_gives_itself_dates_a_passage_whose_metadata_has_none(llm_factory):
    from tanglerag.methods.ledger.moment import stated_date

    assert stated_date("Wire report published in 2018: Tiger Roll won.") == (date(2018, 1, 1), "year")
    assert stated_date("The almanac, updated in May 2014: x.") == (date(2014, 5, 1), "month")
    assert stated_date("As of the census of 2010, there were 3,559 people.") is None  # no date follows the cue
    in_text = {pid: (f"Updated on {meta['date']}: {text}" if "date" in meta else text, {"source": meta["source"]},
                     claim) for pid, (text, meta, claim) in FOLDER.items()}
    answer, step = ask(llm_factory, in_text)
    assert [p.answer for p in answer.parts] == ["6,500 dollars"] and step.documents["policy-2024.md"].date == date(
        2024, 3, 1)


def test_a_stated_date_is_a_stamp_near_the_edges_never_a_number_past_next_year_and_dates_the_whole_file(llm_factory):
    from tanglerag.methods.ledger.moment import as_of, stated_date

    assert stated_date("updated in December 9999") is None and as_of("who led as of December 9999") is not None
    assert stated_date("The firm updated 2500 records.") is None  # a number after a cue word is no date
    middle = "An article. " * 30 + "A quintet by Brahms, published in 1890, is played. " + "More words. " * 30
    assert stated_date(middle) is None  # what it is about, not when it was written
    assert stated_date("Last updated: 2019-05-03. The rest.") == (date(2019, 5, 3), "day")
    chunks = {"guide#0": ("Last updated: 2024-03-01. Travel policy, amended.", {"path": "guide.md"}, None),
              "guide#1": ("The yearly travel allowance is 6,500 dollars.", {"path": "guide.md"},
                          ("the yearly travel allowance is 6,500 dollars", "6,500 dollars", "the allowance"))}
    _, step = ask(llm_factory, {k: (t, m, c or ("", "unknown", "")) for k, (t, m, c) in chunks.items()})
    assert step.documents["guide#1"].when() == "2024-03-01" and step.documents["guide#1"].meta == {"date_from": "text"}
