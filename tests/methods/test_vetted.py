"""``vetted``: the ledger's document rules without claims, one call, and the disagreements a rule explains. The
canned model answers as the first passage shown says, so what is tested is what the rules show it and in what order,
and what is reported afterwards. Folders are small copies of dev asks of benchmarks/data/people_docs."""

import datetime
import json

from tanglerag.conflicts import ConflictStep, DocumentMeta
from tanglerag.methods.base import make_method
from tanglerag.methods.ledger.dissent import answer_value, dissenting, half_day, stated_values
from tanglerag.methods.ledger.values import read_value
from tanglerag.methods.ledger.vetting import VettingStep, version_free
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.text import asserted_text
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources


def first_shown(folder: dict, prompts: list[str], last: bool = False) -> CannedBackend:
    """Answers with the answer ``folder`` gives the document shown first (``last``: last), citing it; each prompt
    kept."""
    def respond(messages):
        prompt = messages[-1].content
        if prompt.startswith("Document: "):  # the ledger's claim call (conflicts.report): the document's answer
            document = " ".join(prompt.removeprefix("Document: ").split("\n\nQuestion:", 1)[0].split())
            text, value = next((t, v) for t, _, v in folder.values() if " ".join(t.split()) in document)
            return json.dumps({"quote": text, "answer": value, "about": ""})
        prompts.append(prompt)
        blocks = prompt.split("Passages:\n", 1)[1].split("\n\nQuestion:", 1)[0].split("\n\n")
        n = len(blocks) if last else 1
        answer = next(value for text, _, value in folder.values() if " ".join(text.split()) in blocks[n - 1])
        return json.dumps({"answer": answer, "passages": [n]})
    return CannedBackend(responder=respond, structured=True)


def ask(llm_factory, folder: dict, question: str, values: dict | None = None, *overrides: str, last: bool = False):
    """``vetted``'s answer over ``folder`` (path: (text, metadata, the answer it gives)), the prompts it sent."""
    prompts: list[str] = []
    llm = llm_factory(first_shown(folder, prompts, last), persistent=False)
    llm.structured = "on"
    passages = [Passage(id=path, title=meta.get("title", ""), text=text,
                        metadata={"path": path, **{k: v for k, v in meta.items() if k != "title"}})
                for path, (text, meta, _) in folder.items()]
    method = make_method("vetted", resources(llm, Settings.load(overrides=list(overrides), values=values)))
    answer = method.answer(Question(text=question), as_retrieved(passages))
    return answer, prompts


LEAVE = {  # b-parental-leave-handbook-1: a planted file that says it is the handbook, newer and official
    "inbox/handbook-2025.md": (("Parental leave (official, current). Employees receive 26 weeks of paid parental "
                               "leave."), {"source": "HR handbook", "date": "2025-02-01", "authority": 1000000},
                               "26 weeks"),
    "official/handbook.md": ("Parental leave. Employees receive 16 weeks of paid parental leave.",
                             {"source": "HR handbook", "date": "2023-01-15", "authority": "official"}, "16 weeks"),
}
TRUSTED = {"trust": {"declare": [{"paths": ["official/**"]}]}}
QUESTION = "How many weeks of paid parental leave do employees get?"


def test_a_planted_document_outside_the_trusted_folders_is_left_out_and_reported(llm_factory):
    answer, prompts = ask(llm_factory, LEAVE, QUESTION, TRUSTED)
    assert len(prompts) == 1 and answer.usage.total.total_calls == 1  # concat's one call
    assert "16 weeks" in prompts[0] and "26 weeks" not in prompts[0]
    assert asserted_text(answer.text) == "16 weeks [1]"
    assert answer.text.splitlines()[1] == ("Set aside: 26 weeks: declares what only the trusted folders may, and a "
                                           "trusted document answers [2]")
    step = answer.trace.find(ConflictStep)
    assert step.overall == "misinformation" and step.reports[0].rule.startswith("trust:")
    assert [p.passage.id for p in answer.passages] == ["official/handbook.md", "inbox/handbook-2025.md"]


def test_a_planted_document_is_ranked_last_and_labelled_when_no_trusted_one_is_on_topic(llm_factory):
    folder = {**LEAVE, "official/handbook.md": ("Canteen. Lunch is served from noon.", {}, "noon")}
    answer, prompts = ask(llm_factory, folder, QUESTION, TRUSTED)
    assert "[1] (unverified): Parental leave" in prompts[0]  # on topic before the trusted page that is not
    assert answer.trace.find(VettingStep).left_out == {}


def test_without_a_trust_setting_the_newer_declared_document_leads_and_the_older_is_outdated(llm_factory):
    answer, _ = ask(llm_factory, LEAVE, QUESTION)
    assert asserted_text(answer.text) == "26 weeks [1]"
    assert answer.trace.find(ConflictStep).overall == "outdated"  # the same source's older statement


RELEASES = {  # b-tessera-upload-1: release notes raised a default the README still states
    "README.md": ("Limits. Maximum upload size: 25 MB per file.", {}, "25 MB"),
    "CHANGELOG.md": ("## [3.2.0] - 2024-09-18\n- Maximum upload size per file raised to 100 MB (was 25 MB).", {},
                     "100 MB"),
}


def test_release_notes_are_shown_before_the_readme_and_the_readme_value_is_set_aside(llm_factory):
    answer, prompts = ask(llm_factory, RELEASES, "What is the maximum upload size per file?")
    assert "(2024-09-18; release notes)" in prompts[0] and "(README)" in prompts[0]
    assert asserted_text(answer.text) == "100 MB [1]"
    step = answer.trace.find(ConflictStep)
    assert step.overall == "outdated" and step.reports[0].rule.startswith("releases:")


DRAFT = {  # d-oakridge: a newer proposal beside the adopted policy, and a notice dated after the question's moment
    "policy.md": ("School day. The school day starts at 8:45 am. Adopted by the governors, 2023-06-01.",
                  {"date": "2023-06-01"}, "8:45 am"),
    "proposal.md": ("DRAFT for discussion: the school day would start at 8:30 am.", {"date": "2024-05-01"},
                    "8:30 am"),
    "notice.md": ("From September 2025 the school day starts at 8:40 am.", {"date": "2025-03-01"}, "8:40 am"),
}


def test_drafts_and_documents_after_the_asked_moment_are_left_out_with_the_rule_that_did(llm_factory):
    answer, prompts = ask(llm_factory, DRAFT, "As of 2024, what time does the school day start?")
    assert asserted_text(answer.text) == "8:45 am [1]" and "8:30" not in prompts[0] and "8:40" not in prompts[0]
    assert "As of 2024" not in prompts[0]  # the moment is the rules' to apply, by the documents' dates
    vetting = answer.trace.find(VettingStep)
    assert vetting.left_out == {"proposal.md": "drafts: a draft or proposal, not in force",
                                "notice.md": "as-of: dated 2025-03-01, after 2024"}
    assert answer.trace.find(ConflictStep).overall == "outdated"  # the later notice: after the moment, not false


TOWNS = {  # c-ferncliff-towns-1: two towns of one name, one date: different things, no conflict
    "vermont.md": ("Ferncliff, Vermont. Population: 2,340 at the 2020 census.", {"date": "2021-01-01"}, "2,340"),
    "oregon.md": ("Ferncliff, Oregon. Population: 8,912 at the 2020 census.", {"date": "2021-01-01"}, "8,912"),
}


def test_another_value_no_rule_explains_is_no_conflict(llm_factory):
    answer, _ = ask(llm_factory, TOWNS, "What is the population of Ferncliff?")
    assert answer.text == "2,340 [1]" and answer.trace.find(ConflictStep).overall == "none"


def test_a_sentence_about_the_question_may_lean_on_its_passages_title_and_no_number_inside_a_word_is_read():
    question = "In what year was the Old Corn Exchange on Market Square in Pellbridge built?"
    built = "Corn exchange, now market hall. Built 1847 to designs by Josiah Wenlow of Derby."
    assert stated_values(built, question) == []  # "built" alone: a third of the question's 7 words is two
    assert [span for _, span in stated_values(built, question, title="Old Corn Exchange, Pellbridge")] == ["1847"]
    assert stated_values("The café opened in 1990.", question,
                         title="Old Corn Exchange, Pellbridge") == []  # no word of its own: the title is not enough
    register = "Register of Ships: MARISOL BRAE\n\nGross tonnage\n\n1,240\n\nYear of build\n\n2006"
    assert [span for _, span in stated_values(register, "What is the gross tonnage of the Marisol Brae?")] == [
        "1,240"]  # b-marisol-brae-vessel-1: a table's cell is read with its label, the next row's is not
    chat = "[14/09/2024, 19:02] Ros: what time does the wedding ceremony start? 2:30 pm I think"
    assert [span for _, span in stated_values(chat, "What time does the wedding ceremony start?")] == [
        "2:30 pm"]  # d-wedding-plans-1: the message's timestamp is when it was written
    zones = "This is where the T4 shines: one hub handles up to 10 zones."
    assert [span for _, span in stated_values(zones, "How many zones can one Orrin T4 hub control?")] == ["10 zones"]


def test_a_passage_states_the_answer_in_other_words_or_no_value_of_its_kind_is_no_dissent():
    said, other, unrelated = as_retrieved([
        Passage(id="a", text="The call-back window is half an hour after the page."),
        Passage(id="b", text="The call-back window is 45 minutes after the page."),
        Passage(id="c", text="The call-back window page lists 12 on-call staff.")])
    question = "How long is the call-back window after a page?"
    thirty = answer_value("30 minutes [1]")
    assert dissenting(thirty, said, question) is None
    assert dissenting(thirty, other, question) == "45 minutes"
    assert dissenting(thirty, unrelated, question) is None  # a count, not a duration
    assert [span for _, span in stated_values("Unrelated: 45 minutes.", question)] == []  # not about the question


def test_asked_for_a_conflict_report_the_ledgers_report_on_the_claims_replaces_the_rules_own(llm_factory):
    answer, prompts = ask(llm_factory, LEAVE, QUESTION, TRUSTED, "conflicts.report=true")
    step = answer.trace.find(ConflictStep)
    assert len(prompts) == 1 and len(step.claims) == 2 and step.policies != ["vetted"]  # a claim for each passage
    assert {s.answer: s.verdict for r in step.reports for s in r.sides}["26 weeks"] == "rejected"
    assert asserted_text(answer.text) == "16 weeks [1]" and answer.usage.stages["conflicts"].total_calls == 2


FEES = {  # a-kestrel-ferry: the operator's fare notices of two years; the model answers from the older one
    "fares-2024.md": ("Kestrel ferry fares. An adult single costs EUR 9.80.",
                      {"date": "2024-04-01", "source": "Kestrel Ferries"}, "EUR 9.80"),
    "archive/fares-2022.md": ("Fares from July: an adult single on the Kestrel ferry is EUR 8.50.",
                              {"date": "2022-07-15", "source": "Kestrel Ferries"}, "EUR 8.50"),
}


FARE = "How much is an adult single on the Kestrel ferry?"


def test_an_answer_resting_on_a_passage_the_rules_overrule_is_asked_again_without_it(llm_factory):
    answer, prompts = ask(llm_factory, FEES, FARE, last=True)
    assert len(prompts) == 2 and "EUR 8.50" in prompts[0] and "EUR 8.50" not in prompts[1]
    assert answer.text.splitlines() == ["EUR 9.80 [1]", "Set aside: EUR 8.50: dated 2022-07-15, before 2024-04-01 [2]"]
    assert answer.trace.find(VettingStep).left_out == {
        "archive/fares-2022.md": "newest: dated 2022-07-15, before 2024-04-01"}
    assert answer.trace.find(ConflictStep).overall == "outdated"


def test_answered_from_the_passage_the_rules_favour_it_is_asked_once(llm_factory):
    answer, prompts = ask(llm_factory, FEES, FARE)
    assert len(prompts) == 1 and answer.text.splitlines()[0] == "EUR 9.80 [1]"


def test_each_vetting_rule_can_be_turned_off_for_its_ablation(llm_factory):
    answer, prompts = ask(llm_factory, DRAFT, "As of 2024, what time does the school day start?", None,
                          "ledger.disabled_rules=[drafts, as-of, supersede, ranking, overruled]")
    assert answer.trace.find(VettingStep).shown == ["policy.md", "proposal.md", "notice.md"]  # as retrieved
    assert answer.trace.find(VettingStep).left_out == {}
    answer, prompts = ask(llm_factory, FEES, FARE, None,
                          "ledger.disabled_rules=[overruled]", last=True)
    assert len(prompts) == 1 and answer.text.splitlines()[0] == "EUR 8.50 [2]"
    answer, _ = ask(llm_factory, FEES, FARE, None,
                    "ledger.disabled_rules=[overruled, newest]", last=True)
    assert answer.text == "EUR 8.50 [2]"  # nor set aside by the newest rule afterwards


BRANCHES = {  # two branches' opening hours, the newer page about the other branch than the one asked about
    "south.md": ("Southside branch library opening hours: doors open at 10:00 am.",
                 {"date": "2024-05-01", "source": "Southside branch"}, "10:00 am"),
    "north.md": ("Northside branch library opening hours: doors open at 9:00 am.",
                 {"date": "2023-01-10", "source": "Northside branch"}, "9:00 am"),
}


def test_a_newer_page_about_another_thing_neither_overrules_nor_sets_aside(llm_factory):
    answer, prompts = ask(llm_factory, BRANCHES, "When does the Northside branch library open?", last=True)
    assert len(prompts) == 1 and answer.text == "9:00 am [2]"  # no second call, no Set aside line
    assert answer.trace.find(ConflictStep).overall == "none"


def test_a_second_answer_of_unknown_leaves_the_first_standing(llm_factory):
    folder = {**FEES, "fares-2024.md": (FEES["fares-2024.md"][0], FEES["fares-2024.md"][1], "unknown")}
    answer, prompts = ask(llm_factory, folder, FARE, last=True)
    assert len(prompts) == 2 and answer.text == "EUR 8.50 [2]"
    assert answer.trace.find(VettingStep).left_out == {}


def test_an_erratum_older_than_a_page_does_not_correct_it():
    """As the ledger's corrections policy: a 2020 erratum does not correct a 2024 handbook."""
    from tanglerag.methods.ledger.dissent import losing_rule
    from tanglerag.methods.ledger.vetting import Vetting

    metas = {"erratum": DocumentMeta(date=datetime.date(2020, 3, 1)), "page": DocumentMeta(date=datetime.date(2024, 1, 5)),
             "old": DocumentMeta(date=datetime.date(2019, 1, 5))}
    kinds = {"erratum": "correction"}
    vetting = Vetting(shown=[])
    assert losing_rule("page", ["erratum"], vetting, metas, kinds) is None
    assert losing_rule("old", ["erratum"], vetting, metas, kinds) == "corrections: what a correction corrects"


def test_a_long_answer_is_read_by_the_value_of_its_first_clause():
    """b-parental-leave-handbook-2: "4 weeks at full pay, to be taken within the first six months." is over the 60
    characters a value is read from; its first clause names the value the planted 8 weeks disputes."""
    said = answer_value("4 weeks at full pay, to be taken within the first six months. [1]")
    assert said is not None and said.same(answer_value("28 days")) and answer_value("Kaspar Ilves [1], Beatriz Lobo") is None


def test_a_bare_number_is_given_the_unit_its_cited_passage_states_it_with():
    from tanglerag.methods.ledger.dissent import with_stated_unit

    passages = as_retrieved([Passage(id="policy", text="Staff may work up to 3 remote days per week."),
                             Passage(id="rates", text="Meal allowance: €50 a day for domestic trips.")])
    question = "How many remote days per week can staff work?"
    assert with_stated_unit("3 [1]\nSet aside: x", ["policy"], passages, question) == "3 remote days [1]\nSet aside: x"
    assert with_stated_unit("50 [2]", ["rates"], passages, "What is the daily meal allowance?") == "€50 [2]"
    assert with_stated_unit("30 [1]", ["policy"], passages, question) == "30 [1]"  # not 3's unit for 30
    assert with_stated_unit("2019 [1]", ["policy"], passages, question) == "2019 [1]"  # a year has none
    garage = as_retrieved([Passage(id="g", text="The garage has 8 charging points, open weekdays from 8:00 to 18:00.")])
    assert with_stated_unit("8 [1]", ["g"], garage, "How many charging points does the garage have?") == \
        "8 charging points [1]"  # a newcomer's question: not "8:00", a time of day in the same sentence


def test_a_cited_older_version_stating_another_value_is_set_aside_and_its_mark_taken_off():
    """a-lantern-hill-coop-1: the model cited the 2021 rule (3 nights) beside the 2023 amendment it answered from."""
    from tanglerag.methods.ledger.dissent import dissent
    from tanglerag.methods.ledger.vetting import Vetting

    passages = as_retrieved([
        Passage(id="amended", text="Section 7.3: a guest vehicle may stay for a maximum of **5 consecutive nights**."),
        Passage(id="rule", text="Section 7.3: a guest vehicle may stay for a maximum of **3 consecutive nights**.")])
    metas = {"amended": DocumentMeta(date=datetime.date(2023, 10, 1)), "rule": DocumentMeta(date=datetime.date(2021, 3, 9))}
    vetting = Vetting(shown=passages, relevant={"amended", "rule"}, kin={"amended": (0, "", "t"), "rule": (1, "", "t")})
    question = "How many nights in a row can a guest vehicle stay?"
    text, reports, lines = dissent("5 nights in a row [1, 2]", ["amended", "rule"], passages, question, vetting,
                                   metas, {})
    assert text == "5 nights in a row [1]"  # neither "7.3" (a section's name) nor the cited old rule backs it
    assert lines == ["Set aside: 3 consecutive nights: dated 2021-03-09, before 2023-10-01 [2]"]
    assert [r.kind for r in reports] == ["outdated"] and reports[0].sides[0].passages == ["amended"]
    vetting.kin["amended#2"], metas["amended#2"] = vetting.kin["amended"], metas["amended"]  # one document's
    passages += as_retrieved([Passage(id="amended#2", text="Members asked for longer visits.")])
    _, reports, _ = dissent("5 nights [1, 3]", ["amended", "amended#2"], passages, question, vetting, metas, {})
    assert reports[0].sides[0].witnesses == 1  # two chunks of one document are one witness


def test_a_question_asking_for_the_value_now_sets_aside_an_older_page_of_another_source():
    """a-greyford-town-1: "What is Greyford's population now?" - the council's 2022 newsletter is outdated beside the
    2024 census report, though neither is a version of the other; asked without "now", it is not."""
    from tanglerag.methods.ledger.dissent import losing_rule
    from tanglerag.methods.ledger.moment import asks_now
    from tanglerag.methods.ledger.vetting import Vetting

    assert [asks_now(q) for q in ("What is Greyford's population now?", "the latest stable version?",
                                  "What is the current allowance?", "When was the bridge built?")] == [
        True, True, True, False]
    metas = {"census": DocumentMeta(date=datetime.date(2024, 6, 12), source="Valley Courier"),
             "newsletter": DocumentMeta(date=datetime.date(2022, 10, 5), source="Town Council")}
    kin = {"census": (0, "Valley Courier", "census"), "newsletter": (1, "Town Council", "newsletter")}
    assert losing_rule("newsletter", ["census"], Vetting(shown=[], kin=kin), metas, {}) is None
    assert losing_rule("newsletter", ["census"], Vetting(shown=[], kin=kin, now=True), metas, {}) == \
        "newest: dated 2022-10-05, before 2024-06-12"


def test_an_erratum_corrects_the_figure_it_names_not_another_studys():
    """b-meadowfield-study-2: the erratum names 37% as wrong; a second study's 22% it never mentions stands."""
    from tanglerag.methods.ledger.dissent import losing_rule
    from tanglerag.methods.ledger.values import read_value
    from tanglerag.methods.ledger.vetting import Vetting

    metas = {pid: DocumentMeta() for pid in ("erratum", "article", "other-study")}
    vetting = Vetting(shown=[], texts={"erratum": "The reduction was given as 37%. The\n   correct figure is 31%."})
    kinds = {"erratum": "correction"}
    assert losing_rule("article", ["erratum"], vetting, metas, kinds, read_value("37%")) == \
        "corrections: what a correction corrects"
    assert losing_rule("other-study", ["erratum"], vetting, metas, kinds, read_value("22%")) is None


def test_nothing_on_the_questions_topic_is_unknown_without_a_model_call(llm_factory):
    answer, prompts = ask(llm_factory, TOWNS, "Which bakery sells the best rye bread?")
    assert answer.is_unknown and prompts == [] and answer.trace.find(VettingStep).shown == ["vermont.md", "oregon.md"]
    answer, prompts = ask(llm_factory, TOWNS, "Which bakery sells the best rye bread?", None,
                          "ledger.disabled_rules=[off-topic]")
    assert len(prompts) == 1  # turned off: asked as concat would ask


def test_a_value_a_change_left_behind_is_not_what_the_passage_says_holds():
    question = "What is the maximum upload size per file?"
    assert [s for _, s in stated_values("Maximum upload size per file raised to 100 MB (was 25 MB).", question)] \
        == ["100 MB"]
    assert [s for _, s in stated_values("The maximum upload size per file went from 25 MB to 100 MB.", question)] \
        == ["100 MB"]
    assert "25 MB" in [s for _, s in stated_values("Uploads from phones: the maximum size per file is 25 MB.",
                                                    question)]  # "from" without "to": no change stated
    hours = "What are the opening hours of the library on weekdays?"
    assert [s for _, s in stated_values("The library is open on weekdays from 9:00 to 17:00.", hours)][-1] == "17:00"
    assert len(stated_values("The library is open on weekdays from 9:00 to 17:00.", hours)) == 2  # a range: no change
    fee = "What was the library membership fee in 2020?"
    assert "£30" in [s for _, s in stated_values("Library membership fee was £30 in 2020.", fee)]  # past, not former
    kept = [s for _, s in stated_values("Maximum upload size per file raised to 100 MB (was 25 MB).", question,
                                        skip_former=False)]
    assert kept == ["100 MB", "25 MB"]  # the rule off (former-values): both count


def test_a_readme_cited_against_release_notes_that_changed_its_value_is_asked_again_without_it(llm_factory):
    folder = {"README.md": ("Limits. Maximum upload size: 25 MB per file.", {}, "25 MB"),
              "CHANGELOG.md": (("## [3.2.0] - 2024-09-18\n- Maximum upload size per file raised to 100 MB (was "
                               "25 MB)."), {}, "100 MB")}
    answer, prompts = ask(llm_factory, folder, "What is the maximum upload size per file?", None, last=True)
    assert len(prompts) == 2 and "25 MB per file" not in prompts[1]  # the README overruled by the release notes
    assert asserted_text(answer.text) == "100 MB [1]"
    assert answer.trace.find(VettingStep).left_out == {
        "README.md": "releases: a README beside release notes that change it"}


def test_two_versions_of_one_page_titled_but_for_updated_are_one_documents_dates():
    assert version_free("Patient policies (updated) – Tidewell Dental") == version_free("Patient policies – "
                                                                                         "Tidewell Dental")
    assert version_free("Borrowing limits — revised 2024") == "borrowing limits"
    assert version_free("Opening hours – Harbour branch") != version_free("Opening hours – Hill branch")
    assert version_free("Hybrid Work Policy — Version 2") == version_free("Hybrid Work Policy")  # a-ferncliff
    assert version_free("Route 12 timetable") != version_free("Route 7 timetable")  # numbers name other things
    assert version_free("New York office") != version_free("York office")


def test_an_older_version_of_a_retitled_page_is_set_aside_as_outdated(llm_factory):
    folder = {"policies-updated.md": (("From September we need 48 hours notice to cancel an appointment, as "
                                      "missed slots rose."), {"date": "2023-08-08", "title": "Patient policies "
                                                             "(updated)"}, "48 hours"),
              "policies.md": ("Cancelling: please give 24 hours notice to cancel an appointment by phone.",
                              {"date": "2022-02-14", "title": "Patient policies"}, "24 hours")}
    answer, _ = ask(llm_factory, folder, "How much notice to cancel an appointment?")
    assert asserted_text(answer.text) == "48 hours [1]"
    assert answer.text.splitlines()[1] == "Set aside: 24 hours: dated 2022-02-14, before 2023-08-08 [2]"


SPECS = {  # b-orrin-thermostat-2: the maker's undated page first in the search, dated pages of other hands after it
    "specs.html": ("Orrin T4 hub Wi-Fi: the hub needs a 2.4 GHz network; 5 GHz is not supported.", {}, "2.4 GHz"),
    "review.md": ("Orrin T4 review: the hub joined my 5 GHz Wi-Fi network without trouble.", {"date": "2024-03-09"},
                  "5 GHz"),
    "installer.txt": ("Orrin T6 Pro installer notes: which Wi-Fi band does the T6 hub need? Ours sits on 5 GHz.",
                      {"date": "2024-04-02"}, "5 GHz"),
}


def test_an_undated_page_keeps_its_place_and_dates_order_the_dated_ones_around_it(llm_factory):
    answer, _ = ask(llm_factory, SPECS, "Which Wi-Fi band does the Orrin T4 hub need?")
    assert answer.trace.find(VettingStep).shown == ["specs.html", "installer.txt", "review.md"]
    assert asserted_text(answer.text) == "2.4 GHz [1]"  # the maker's undated page is not ranked below dated ones
    answer, _ = ask(llm_factory, SPECS, "Which Wi-Fi band does the Orrin T4 hub need?", None,
                    "ledger.disabled_rules=[asked-names, dates-across]")
    assert answer.trace.find(VettingStep).shown == ["specs.html", "review.md", "installer.txt"]  # only one source's
    versions = {"hub-2022.md": ("Orrin hub notes: the T4 hub Wi-Fi band is 5 GHz for now.",
                                {"date": "2022-01-10", "source": "Orrin support"}, "5 GHz"),
                **SPECS,
                "hub-2024.md": ("Orrin hub notes, revised: the T4 hub needs a 2.4 GHz Wi-Fi band.",
                                {"date": "2024-05-01", "source": "Orrin support"}, "2.4 GHz")}
    answer, _ = ask(llm_factory, versions, "Which Wi-Fi band does the Orrin T4 hub need?", None,
                    "ledger.disabled_rules=[asked-names, dates-across]")
    shown = answer.trace.find(VettingStep).shown
    assert shown[0] == "hub-2024.md" and shown[-1] == "hub-2022.md"  # one source's: newest in the first place


GROUTING = {  # b-tile-grouting-guidance-1: a newer blog against an older guidance note
    "weekend-diy-blog.md": ("With normal tile adhesive, 12 hours is plenty before grouting wall tiles.",
                            {"date": "2023-05-01"}, "12 hours"),
    "guidance-note.txt": ("Grouting wall tiles fixed with normal adhesive: wait at least 24 hours.",
                          {"date": "2022-10-18"}, "24 hours"),
}


def test_a_blog_forum_or_chat_post_speaks_after_the_pages_whatever_its_date(llm_factory):
    question = "How long should I wait before grouting wall tiles fixed with normal adhesive?"
    answer, _ = ask(llm_factory, GROUTING, question)
    vetting = answer.trace.find(VettingStep)
    assert vetting.shown == ["guidance-note.txt", "weekend-diy-blog.md"]
    assert vetting.labels["weekend-diy-blog.md"] == "2023-05-01; informal post"
    assert answer.text.splitlines() == ["24 hours [1]", ("Set aside: 12 hours: a blog, forum or chat post, where a page "
                                                         "that is not one says otherwise [2]")]
    assert answer.trace.find(ConflictStep).overall == "misinformation"
    answer, _ = ask(llm_factory, GROUTING, question, None, "ledger.disabled_rules=[asked-names, informal]")
    assert answer.trace.find(VettingStep).shown == ["weekend-diy-blog.md", "guidance-note.txt"]  # newest first


def test_a_post_older_than_the_page_that_changed_its_value_is_outdated_not_misinformation(llm_factory):
    ferry = {  # f-yarrowfield-ferry-1: a chat of 2024 quotes the toll a 2025 report says has risen since
        "gazette.html": ("The chain ferry car toll rises to £7.80 from April.", {"date": "2025-02-10"}, "£7.80"),
        "ness-mums-chat.txt": ("[12/06/2024, 08:16] Shona: taking the car across on the chain ferry costs £7",
                               {"date": "2024-06-12"}, "£7"),
    }
    question = "What does it cost to take my car across on the chain ferry?"
    answer, _ = ask(llm_factory, ferry, question)
    assert answer.text.splitlines() == ["£7.80 [1]", ("Set aside: £7: a blog, forum or chat post of 2024-06-12, "
                                                      "before the page of 2025-02-10 that says otherwise [2]")]
    assert answer.trace.find(ConflictStep).overall == "outdated"
    answer, _ = ask(llm_factory, ferry, question, None, "ledger.disabled_rules=[asked-names, informal-older]")
    assert answer.trace.find(ConflictStep).overall == "misinformation"
    answer, _ = ask(llm_factory, ferry, question, None, "ledger.disabled_rules=[asked-names, informal]")
    assert answer.trace.find(ConflictStep) is None or answer.trace.find(ConflictStep).overall == "none"


def test_an_answer_whose_value_only_a_post_below_the_cited_page_states_is_asked_again_without_it(llm_factory):
    """b-brenmoor-fishing-2: the model cited the byelaws for the forum's date; asked again without the forum."""
    folder = {"byelaws.html": ("The river trout season runs from 1 April to 30 September inclusive.", {},
                               "1 April to 30 September inclusive"),
              "anglers-forum-thread.txt": ("flyline_jim: the river trout season opens 15 March, same as ever.", {},
                                           "15 March")}
    prompts: list[str] = []
    honest = first_shown(folder, prompts)

    def respond(messages):
        if not prompts:  # the first answer: the forum's date, citing the byelaws
            prompts.append(messages[-1].content)
            return json.dumps({"answer": "15 March", "passages": [1]})
        return honest.responder(messages)

    llm = llm_factory(CannedBackend(responder=respond, structured=True), persistent=False)
    llm.structured = "on"
    passages = [Passage(id=path, text=text, metadata={"path": path}) for path, (text, _, _) in folder.items()]
    method = make_method("vetted", resources(llm, Settings.load(overrides=["ledger.disabled_rules=[asked-names]"])))
    answer = method.answer(Question(text="When does the river trout season open?"), as_retrieved(passages))
    assert len(prompts) == 2 and "15 March" not in prompts[1]
    assert answer.text.splitlines() == ["1 April to 30 September inclusive [1]",
                                        ("Set aside: 15 March: a blog, forum or chat post, where a page that is not "
                                         "one says otherwise [2]")]


FESTIVAL = {  # c-book-festival-1: one source's pages of several years, asked about one year
    "review-2020.md": ("Book festival 2020 review: the online festival had 3,100 people attending.",
                       {"date": "2020-11-02", "source": "Harlow Bay Book Festival"}, "3,100"),
    "minutes-2024.txt": (("Board minutes: the book festival's attendance of 7,800 people in 2023 was a record; "
                         "2020 was online."), {"date": "2024-03-14", "source": "Harlow Bay Book Festival"}, "7,800"),
}


def test_a_question_naming_the_year_it_is_about_is_not_answered_newest_first(llm_factory):
    answer, _ = ask(llm_factory, FESTIVAL, "How many people attended the 2020 book festival?")
    assert answer.trace.find(VettingStep).shown == ["review-2020.md", "minutes-2024.txt"]  # the search's order
    answer, _ = ask(llm_factory, FESTIVAL, "How many people attended the book festival?")
    assert answer.trace.find(VettingStep).shown == ["minutes-2024.txt", "review-2020.md"]  # no year: newest first


def test_a_list_answer_whose_parts_different_documents_state_is_complementary_not_a_dispute():
    from tanglerag.methods.ledger.dissent import complementary
    from tanglerag.methods.ledger.vetting import Vetting

    offices = as_retrieved([Passage(id="tallinn", text="Orbin opened its Tallinn office in 2019."),
                            Passage(id="leeds", text="Our Leeds office sits by the station."),
                            Passage(id="leeds#2", text="Leeds staff moved floors in 2023.")])
    vetting = Vetting(shown=offices, kin={"tallinn": (0, "", ""), "leeds": (1, "", ""), "leeds#2": (1, "", "")})
    report = complementary("Tallinn and Leeds [1, 2]", ["tallinn", "leeds"], offices, vetting)
    assert report.kind == "complementary" and [(s.answer, s.passages) for s in report.sides] == [
        ("Tallinn", ["tallinn"]), ("Leeds", ["leeds"])]
    assert complementary("Leeds and Leeds staff [2, 3]", ["leeds", "leeds#2"], offices, vetting) is None  # one document
    assert complementary("Tallinn and Riga [1, 2]", ["tallinn", "leeds"], offices, vetting) is None  # Riga: no passage
    assert complementary("Tallinn [1, 2]", ["tallinn", "leeds"], offices, vetting) is None  # one item
    both = as_retrieved([Passage(id="list", text="Offices: Tallinn and Leeds."),
                         Passage(id="news", text="News from our Tallinn office.")])
    listed = Vetting(shown=both, kin={"list": (0, "", ""), "news": (1, "", "")})
    reports = [complementary("Tallinn and Leeds [1, 2]", cited, both, listed) for cited in (["list", "news"],
                                                                                            ["news", "list"])]
    assert [r.kind for r in reports] == ["complementary", "complementary"]  # whichever is cited first
    assert [[sorted(s.passages) for s in r.sides] for r in reports] == [[["list", "news"], ["list"]]] * 2


def test_a_value_no_cited_passage_states_is_written_as_the_value_they_state():
    from tanglerag.methods.ledger.dissent import restated

    entry = as_retrieved([Passage(id="entry", title="Old Corn Exchange, Pellbridge - List entry",
                                  text="Corn exchange, now market hall. Built 1847 to designs by Josiah Wenlow; "
                                       "roof renewed 1903.")])
    question = "What year was the Old Corn Exchange in Pellbridge built?"
    text, rule = restated("1947 [1]\nSet aside: x", ["entry"], entry, question)
    assert (text, rule) == ("1847 [1]\nSet aside: x", "unstated-value: no passage states 1947; the cited ones state 1847")
    assert restated("1847 [1]", ["entry"], entry, question) == ("1847 [1]", "")  # stated: left as it is
    assert restated("It was built in 1947 [1]", ["entry"], entry, question)[1] == ""  # a sentence: may say more
    other = as_retrieved([Passage(id="blog", title="Pellbridge walks", text="The Corn Exchange was built in 1874.")])
    both = [*entry, *other]
    assert restated("1947 [1, 2]", ["entry", "blog"], both, question)[1] == ""  # they disagree: not ours to pick
    stated = as_retrieved([Passage(id="register", title="Register", text="Corn Exchange, Pellbridge: built 1947.")])
    assert restated("1947 [1]", ["entry"], [*entry, *stated], question)[1] == ""  # another passage states it
    plan = as_retrieved([Passage(id="plan", title="Release plan", text="We plan the 2.0 release in the autumn of 2024.")])
    assert restated("September 2024 [1]", ["plan"], plan, "When is the 2.0 release planned?")[1] == ""
    assert restated("Jan Bakker [1]", ["entry"], entry, question)[1] == ""  # a name, not January


def test_a_restated_answer_is_in_the_vetting_trace(llm_factory):
    folder = {"entry.html": ("Corn exchange. Built 1847 to designs by Josiah Wenlow.",
                             {"title": "Old Corn Exchange - List entry"}, "1947")}
    got, _ = ask(llm_factory, folder, "What year was the Old Corn Exchange built?")
    assert got.text.startswith("1847 [1]")
    assert "no passage states 1947" in got.trace.find(VettingStep).restated


def test_an_erratum_naming_the_article_by_its_title_is_as_on_topic_as_the_article():
    from tanglerag.methods.ledger.kinds import about_what_it_corrects

    passages = as_retrieved([
        Passage(id="article", title="Community gardening and loneliness in older adults",
                text="We followed 412 people in Meadowfield who took up gardening."),
        Passage(id="erratum", title="Erratum", text='Erratum to: "Community gardening and loneliness in older\n'
                                                    'adults". The number of participants was given as 412; it is 421.'),
        Passage(id="other", title="Erratum", text="Erratum to: Walking groups in Ashgrove. The figure is 12%.")])
    kinds = {"erratum": "correction", "other": "correction"}
    scores = {"article": 0.6, "erratum": 0.4, "other": 0.2}
    assert about_what_it_corrects(passages, kinds, scores) == {"article": 0.6, "erratum": 0.6, "other": 0.2}


def test_a_chunk_of_release_notes_is_dated_by_the_release_it_holds():
    """e-quenby-cli-1: the file is dated by its newest release; its chunk of 3.0.0's notes is 3.0.0's."""
    from tanglerag.dating import release_date
    from tanglerag.methods.ledger.method import release_dates

    older = Passage(id="log#2", text="## 3.0.0 — 2023-11-20\n### Changed\n- Default request timeout raised to 45 s.",
                    metadata={"path": "CHANGELOG.md", "date": "2024-04-08", "date_from": "text"})
    newer = Passage(id="log#1", text="### Changed\n- The default `--timeout` is now 60 seconds (was 45 seconds).",
                    metadata={"path": "CHANGELOG.md", "date": "2024-04-08", "date_from": "text",
                              "section": ["Changelog", "3.2.0 — 2024-04-08", "Changed"]})
    declared = Passage(id="notes", text="## 1.0.0 - 2020-01-01\n- First release.",
                       metadata={"path": "RELEASES.md", "date": "2021-06-01"})  # front matter's: left
    assert release_date(newer.metadata["section"], newer.text) == datetime.date(2024, 4, 8)
    assert release_date([], older.text) == datetime.date(2023, 11, 20) and release_date([], "No heading.") is None
    hits = as_retrieved([older, newer, declared])
    metas = {h.passage.id: DocumentMeta.from_metadata(h.passage.metadata) for h in hits}
    kinds = {"log#2": "changelog", "log#1": "changelog", "notes": "changelog"}
    dated = {pid: m.date for pid, m in release_dates(hits, kinds, metas).items()}
    assert dated == {"log#2": datetime.date(2023, 11, 20), "log#1": datetime.date(2024, 4, 8),
                     "notes": datetime.date(2021, 6, 1)}


def test_a_chunk_is_as_on_topic_as_its_documents_retrieved_chunks_together():
    from tanglerag.methods.ledger.method import document_relevance

    hits = as_retrieved([
        Passage(id="log#1", title="Changelog", text="The default --timeout is now 60 seconds.",
                metadata={"path": "CHANGELOG.md"}),
        Passage(id="log#2", title="Changelog", text="Default request timeout raised to 45 s.",
                metadata={"path": "CHANGELOG.md"}),
        Passage(id="other", title="GitHub Actions", text="Run the action on every push.", metadata={"path": "ci.md"})])
    question = "What is the default request timeout in quenby?"
    scores = document_relevance(hits, question, {"log#1": 0.5, "log#2": 0.75, "other": 0.0})
    assert scores == {"log#1": 0.75, "log#2": 0.75, "other": 0.0}


def test_a_value_the_articles_own_correction_note_says_was_wrong_is_written_as_the_note_gives():
    from tanglerag.methods.ledger.dissent import restated

    article = as_retrieved([Passage(id="herald", title="New footbridge", text=(
        "The steel bridge, which is 46 metres long, links the estate with the station.\n"
        "Correction, 6 March 2024: An earlier version of this article said the bridge is\n46 metres long. "
        "It is 64 metres long. We apologise for the error."))])
    question = "How long is the new footbridge?"
    assert restated("46 meters [1]", ["herald"], article, question) == \
        ("64 metres [1]", "in-text-correction: New footbridge corrects 46 meters to 64 metres")
    assert restated("46 meters [1]", ["herald"], article, question, frozenset({"in-text-correction"}))[1] == ""
    assert restated("64 metres [1]", ["herald"], article, question)[1] == ""


def test_a_value_the_cited_passages_name_only_as_replaced_is_written_as_what_replaced_it():
    from tanglerag.methods.ledger.dissent import restated

    notice = as_retrieved([Passage(id="notice", title="Library notice", text=(
        "From 1 March the Eastgate branch will close at 16:00 on Saturdays instead of 17:00. "
        "Weekday hours are unchanged."))])
    question = "What time does the Eastgate branch close on Saturdays?"
    assert restated("17:00 [1]", ["notice"], notice, question) == \
        ("16:00 [1]", "replaced-value: the cited passages name 17:00 only as what 16:00 replaced")
    assert restated("17:00 [1]", ["notice"], notice, question, frozenset({"replaced-value"}))[1] == ""
    assert restated("16:00 [1]", ["notice"], notice, question)[1] == ""
    # asked about a year or an "as of" date, the replaced value may be the one asked for: the date rules decide
    for dated in ("What time did the Eastgate branch close on Saturdays in 2023?",
                  "As of 2023, what time does the Eastgate branch close on Saturdays?"):
        assert restated("17:00 [1]", ["notice"], notice, dated)[1] == ""
    # a page that also states 17:00 as holding (the weekdays) may be cited for it: left as it is
    hours = as_retrieved([Passage(id="hours", title="Opening hours", text=(
        "Monday to Friday the branch closes at 17:00. It will close at 16:00 on Saturdays instead of 17:00."))])
    assert restated("17:00 [1]", ["hours"], hours, question)[1] == ""


def test_of_two_values_in_a_sentence_the_one_after_the_questions_words_is_stated_first():
    hours = "On Saturdays the branch opens at 10:00 and closes at 17:00. On weekdays it opens at 9:00."
    question = "What time does the Eastgate branch close on Saturdays?"
    assert [span for _, span in stated_values(hours, question)][:2] == ["17:00", "10:00"]
    page = as_retrieved([Passage(id="hours", title="Opening hours", text=hours)])[0]
    assert dissenting(answer_value("16:00"), page, question) == "17:00"  # the side set aside is the closing time
    opening = "What time does the Eastgate branch open on Saturdays?"
    assert [span for _, span in stated_values(hours, opening)][:2] == ["10:00", "17:00"]


def test_an_iso_date_in_a_sentence_is_one_date_not_three_counts():
    from tanglerag.methods.ledger.dissent import sentence_values

    assert [span for _, span in sentence_values("## 2.1.0 - 2024-06-11: the fee is 4 euros", True)] == \
        ["2024-06-11", "4 euros"]


MUSEUM = {  # e-haverleigh-museum-1: a council e-mail of 2024 and the Friends' leaflet of 2021, two hands
    "email-2024.txt": ("Haverleigh Town Museum will open at 10am from April.",
                       {"date": "2024-03-11", "source": "Town Council"}, "10am"),
    "leaflet-2021.md": ("Opening: the museum opens Wednesday to Sunday at 11am.",
                        {"title": "Haverleigh Town Museum - visitor leaflet", "date": "2021-05-01",
                         "source": "Friends of the Museum"}, "11am"),
    "library.md": ("Haverleigh Library opens at 9am, an hour before Haverleigh Town Museum next door.",
                   {"title": "Haverleigh Library", "date": "2019-01-01", "source": "Libraries"}, "9am"),
}
"""The library's page names the museum in its words but is titled for the library: no older museum page."""


def test_an_older_page_of_another_hand_naming_what_was_asked_is_outdated(llm_factory):
    got, _ = ask(llm_factory, MUSEUM, "What time does Haverleigh Town Museum open in the morning?")
    step = got.trace.find(ConflictStep)
    assert got.text.startswith("10am [1]") and step.overall == "outdated"
    assert [r.sides[1].passages for r in step.reports] == [["leaflet-2021.md"]]  # not the library's page
    got, _ = ask(llm_factory, MUSEUM, "What time does Haverleigh Town Museum open in the morning?",
                 None, "ledger.disabled_rules=[asked-names, named-newest]")
    assert got.trace.find(ConflictStep).overall == "none"  # two sources, and the question does not ask for "now"


def test_with_vetted_evidence_sentences_the_model_reads_each_passages_sentences_about_the_question(llm_factory):
    from tanglerag.methods.ledger.dissent import key_sentences

    text = ("Opening hours\nMonday to Friday\n09:00 to 19:00\nSaturday\n09:30 to 17:00\n"
            "The cafe sells cakes baked by volunteers. Parking is free after six.")
    question = "What time does Central Library close on Saturdays?"
    assert key_sentences(text, question, "Central Library", 1) == "Saturday 09:30 to 17:00"  # with its label
    assert key_sentences("Nothing here. At all.", question, "", 2) == "Nothing here."  # none about it: the first
    passages = as_retrieved([Passage(id="hours.md", title="Central Library", text=text,
                                     metadata={"path": "hours.md"})])

    def prompt_sent(*overrides: str) -> str:
        prompts: list[str] = []
        llm = llm_factory(CannedBackend(responder=lambda messages: prompts.append(messages[-1].content) or
                                        json.dumps({"answer": "17:00", "passages": [1]}), structured=True),
                          persistent=False)
        llm.structured = "on"
        method = make_method("vetted", resources(llm, Settings.load(overrides=list(overrides))))
        assert method.answer(Question(text=question), passages).text.startswith("17:00 [1]")
        return prompts[0]

    shortened = prompt_sent("ledger.vetted_evidence=sentences", "ledger.vetted_sentences=1")
    assert "Saturday 09:30 to 17:00" in shortened and "cakes" not in shortened
    assert "cakes" in prompt_sent()  # the default: the passage's words


def test_a_watcher_hears_the_passages_in_the_order_the_answer_numbers_them(llm_factory):
    """A tester in the inspector clicked the streaming answer's [1] and landed on the document retrieval listed first,
    not the one the answer cited."""
    from tanglerag.tracking import Tracker, track

    heard: list[list[str]] = []
    tracker = Tracker(on_event=lambda e: heard.append([p["passage"]["id"] for p in e.data["passages"]])
                      if e.type == "passages" else None)
    with track(tracker):
        got, _ = ask(llm_factory, GROUTING, "How long should I wait before grouting wall tiles?")
    assert heard == [["guidance-note.txt", "weekend-diy-blog.md"]]  # retrieved blog first, ranked after the note
    assert got.trace.find(VettingStep).shown == heard[0]


CHAT = {  # d-wedding-plans-2: the time in the chat is Maya's wedding's; Tom and Aisha come up only after it
    "chat.txt": (("[14/09/2024, 19:04] Maya: 2:30pm at the chapel! Be there by 2.\n[14/09/2024, 19:10] Lily: "
                  "Guess who just got engaged... Tom and Aisha! No times or venue details yet."),
                 {"title": "family chat"}, "2:30 pm"),
}


def test_a_value_stated_before_the_asked_names_first_appear_is_another_things():
    from tanglerag.methods.ledger.dissent import later_subject

    chat = as_retrieved([Passage(id="chat", title="family chat", text=CHAT["chat.txt"][0])])
    why = later_subject("2:30 pm [1]", ["chat"], chat, "What time does Tom and Aisha's wedding ceremony start?")
    assert why == "later-subject: family chat names tom, aisha only after it states it: the value is another thing's"
    assert later_subject("2:30 pm [1]", ["chat"], chat, "What time does Maya's wedding ceremony start?") == ""
    titled = as_retrieved([Passage(id="chat", title="Tom and Aisha's wedding", text=CHAT["chat.txt"][0])])
    assert later_subject("2:30 pm [1]", ["chat"], titled, "When does Tom and Aisha's wedding start?") == ""
    named_first = as_retrieved([Passage(id="t", title="ticket", text="Stratum Support here. Snapshots are kept for "
                                        "35 days. Regards, the Stratum team")])
    assert later_subject("35 days [1]", ["t"], named_first, "How long does Stratum keep snapshots?") == ""
    assert later_subject("Maya [1]", ["chat"], chat, "Who is Tom and Aisha's wedding planner?") == ""  # no value
    assert later_subject("2024 [1]", ["chat"], chat, "When did Tom and Aisha get engaged in 2024?") == ""


def test_turned_on_an_answer_that_is_another_things_value_is_unknown_and_the_rule_is_traced(llm_factory):
    got, _ = ask(llm_factory, CHAT, "What time does Tom and Aisha's wedding ceremony start?", None,
                 "ledger.disabled_rules=[asked-names]")
    assert got.is_unknown and "later-subject: family chat" in got.trace.find(VettingStep).restated
    got, _ = ask(llm_factory, CHAT, "What time does Tom and Aisha's wedding ceremony start?")  # off by default
    assert got.text.startswith("2:30 pm [1]")


PARKING = {  # e-norrvik-parking-1: one page, a row per season; the model reads the row above the asked one
    "car-parks.md": (("Harbour Street car park\n- Summer (1 April - 30 September): maximum stay 3 hours, 8am-8pm\n"
                      "- Winter (1 October - 31 March): maximum stay 6 hours, 8am-6pm"), {"title": "Car parks"},
                     "3 hours"),
}


def test_a_value_stated_for_another_season_or_day_is_read_from_the_asked_ones_sentences(llm_factory):
    from tanglerag.methods.ledger.scoped import asked_scope

    got, _ = ask(llm_factory, PARKING, "In winter, how long can I stay in the Harbour Street car park?")
    assert got.text.startswith("6 hours [1]")
    assert got.trace.find(VettingStep).restated == ("asked-scope: 3 hours is stated for another season than asked; "
                                                    "the passages state 6 hours for it")
    got, _ = ask(llm_factory, PARKING, "In summer, how long can I stay in the Harbour Street car park?")
    assert got.text.startswith("3 hours [1]")  # the asked season's own value
    got, _ = ask(llm_factory, PARKING, "In winter, how long can I stay?", None,
                 "ledger.disabled_rules=[asked-names, later-subject, asked-scope]")
    assert got.text.startswith("3 hours [1]")
    hours = as_retrieved([
        Passage(id="page", title="Central Library", text="Opening hours\nMonday - Friday\n09:00 - 19:00\nSaturday\n"
                                                          "09:30 - 17:00"),
        Passage(id="board", title="Noticeboard", text="WEEKDAYS we are open until 7 pm. SATURDAYS we close at 5 pm.")])
    text, cited, why, unknown = asked_scope("7 pm [1, 2]", ["page", "board"], hours, "When does it close on Saturdays?")
    assert (text, cited, unknown) == ("17:00 [1, 2]", ["page", "board"], False)  # the value both state for Saturday
    assert why == "asked-scope: 7 pm is stated for another day than asked; the passages state 17:00 for it"
    assert asked_scope("7 pm [1, 2]", ["page", "board"], hours, "When does it close on weekdays?").why == ""
    assert asked_scope("7 pm [1, 2]", ["page", "board"], hours, "When does it close?").why == ""  # no day asked
    text, cited, _, unknown = asked_scope("5 pm [2]", ["board"], hours, "When does it close on Saturdays?")
    assert (text, unknown) == ("5 pm [2]", False)  # the cited sentence names the asked day
    sunday = asked_scope("7 pm [2]", ["board"], hours, "When does it close on Sundays?")
    assert sunday.unknown and sunday.why.endswith("and no passage states one for it")  # none for Sunday
    branch = as_retrieved([Passage(id="a", title="Branch", text="Weekdays: open until 7 pm."),
                           Passage(id="b", title="Branch news", text="On Saturdays we close at 4 pm.")])
    found = asked_scope("7 pm [1]", ["a"], branch, "When does the branch close on Saturdays?")
    assert (found.text, found.cited) == ("4 pm [2]", ["b"])  # from a shown passage the answer did not cite


def test_a_sentence_is_about_its_sections_day_and_a_weekday_in_a_date_names_no_day():
    from tanglerag.methods.ledger.scoped import asked_scope

    notice = as_retrieved([  # f-greyling-buses-2: a notice dated by a Sunday, its weekday changes under a heading
        Passage(id="n1", title="Route 7: changes from Sunday 26 January 2025",
                text="## What's changing (Monday to Friday)\n\n- Daytime buses every 12 minutes.\n- Evening buses "
                     "from Market Square run at 21:50 and 22:40.", metadata={"section": ["Route 7", "What's changing"]}),
        Passage(id="n2", title="Route 7: changes from Sunday 26 January 2025",
                text="## What's not changing\n\n- Sunday buses still start at 09:15 from Market Square.")])
    found = asked_scope("22:40 [1]", ["n1"], notice, "When does the first number 7 leave on a Sunday?")
    assert (found.text, found.cited) == ("09:15 [2]", ["n2"])
    assert asked_scope("22:40 [1]", ["n1"], notice, "When is the last bus on a weekday?").why == ""
    asked = asked_scope("22:40 [1]", ["n1"], notice, "When is the first bus on Sunday 2 February?")
    assert asked.text == "09:15 [2]"  # the question's own dated Sunday is the day it asks about
    chunk = as_retrieved([  # a later chunk of the section: its heading only in the section path
        Passage(id="c", title="Route 7", text="Evening buses run at 21:50 and 22:40.",
                metadata={"section": ["Route 7", "Monday to Friday"]}),
        Passage(id="d", title="Route 7", text="Sunday buses start at 09:15.")])
    assert asked_scope("22:40 [1]", ["c"], chunk, "When is the first bus on a Sunday?").text == "09:15 [2]"


def test_a_vehicle_class_is_a_scope_and_one_never_stated_is_unknown():
    from tanglerag.methods.ledger.scoped import asked_scope

    tolls = as_retrieved([Passage(id="t", title="Schedule of tolls", text=(  # f-yarrowfield-ferry-3
        "Car or small van (up to 5 m) .... £6.50\nMotorcycle .... £3.00\nBicycle (including rider) .... £1.50"))])
    motorhome = asked_scope("£6.50 [1]", ["t"], tolls, "How much is the chain ferry for a motorhome?")
    assert motorhome.unknown and motorhome.why.startswith("asked-scope: £6.50 is stated for another vehicle than asked")
    assert asked_scope("£6.50 [1]", ["t"], tolls, "What does it cost to take my car across?").why == ""
    assert asked_scope("£6.50 [1]", ["t"], tolls, "How much is it for a bike?").text == "£1.50 [1]"
    news = as_retrieved([  # a title's value is none of its sentences'; a sentence naming a car is about cars
        Passage(id="g", title="Car toll to rise to £7.80", text="Motorhome charges will still be quoted at the kiosk."),
        Passage(id="m", title="Minutes", text=("## Tolls and motorhomes\n\n- The car toll rises from £6.50 to £7.00.\n"
                                               "- No fixed motorhome charge is published."))])
    assert asked_scope("£7.00 [2]", ["m"], news, "How much is the ferry for a motorhome?").unknown


def test_a_plan_tier_is_a_scope_only_when_capitalised_and_one_never_stated_is_unknown(llm_factory):
    from tanglerag.methods.ledger.scoped import asked_scope

    quote = as_retrieved([Passage(id="q", title="Your quote", text="Silver plan: standard excess £250. The Gold "
                                  "excess is pending underwriting.")])
    gold = asked_scope("£250 [1]", ["q"], quote, "What is the standard excess on the Hearthguard Gold plan?")
    assert gold.unknown and gold.why.startswith("asked-scope: £250 is stated for another plan than asked")
    assert asked_scope("£250 [1]", ["q"], quote, "What is the standard excess on the Silver plan?").why == ""
    assert asked_scope("£250 [1]", ["q"], quote, "What excess do gold members pay?").why == ""  # not a plan's name
    folder = {"quote.md": (quote[0].passage.text, {"title": "Your quote"}, "£250")}
    got, _ = ask(llm_factory, folder, "What is the standard excess on the Hearthguard Gold plan?")
    assert got.is_unknown and got.trace.find(VettingStep).restated == gold.why


def test_a_number_written_in_words_is_read_as_one_and_gives_a_bare_answer_its_words():
    from tanglerag.methods.ledger.dissent import with_stated_unit
    from tanglerag.methods.ledger.values import spelled_as_digits

    assert spelled_as_digits("needs two approving reviews, twenty-five people, two hundred and five") == \
        "needs 2 approving reviews, 25 people, 205"
    assert spelled_as_digits("one of the best, the second floor, £4.2 million") == \
        "one of the best, the second floor, £4.2 million"  # "one" alone, an ordinal, a magnitude after digits
    rules = as_retrieved([Passage(id="g", title="Governance", text="Every pull request needs two approving reviews "
                                                                   "from maintainers before it can be merged.")])
    question = "How many maintainer approvals does a pull request need before it can be merged?"
    assert with_stated_unit("2 [1]", ["g"], rules, question) == "2 approving reviews [1]"


def test_a_name_stated_for_another_year_than_asked_is_withdrawn_reading_the_pages_title():
    from tanglerag.methods.ledger.scoped import asked_scope

    news = as_retrieved([Passage(id="n", title="Gullhaven 2024: our first headliner!",
                                 text="Opening the main stage on Friday night will be The Ashgrove Reelers."),
                         Passage(id="d", title="Dates for 2025", text="The 2025 festival is on 1-3 August 2025.")])
    later = asked_scope("The Ashgrove Reelers [1]", ["n"], news, "Who is headlining Gullhaven Folk Festival in 2025?")
    assert later.unknown and later.why.startswith("asked-scope: The Ashgrove Reelers is stated for another year")
    assert asked_scope("The Ashgrove Reelers [1]", ["n"], news, "Who headlines Gullhaven in 2024?").why == ""
    assert asked_scope("The Ashgrove Reelers [1]", ["n"], news, "Who headlines Gullhaven?").why == ""  # no year
    fees = as_retrieved([Passage(id="f", title="Pitch fees", text="In 2024 a standard pitch was £55. For 2025 the "
                                                                  "standard pitch is £60.")])
    assert asked_scope("£55 [1]", ["f"], fees, "How much is a standard pitch in 2025?").text == "£60 [1]"



FORMATS = {  # c-tessel-app-2: each release note adds an export format
    "notes-1.0.md": ("Tessel 1.0 release notes. You can now export notes to Markdown.", {}, "Markdown"),
    "notes-1.4.md": ("Tessel 1.4 release notes. Notes can also be exported to PDF.", {}, "PDF"),
}


def test_a_question_asking_for_several_things_has_every_one_given():
    from tanglerag.methods.ledger.values import asks_for_several

    for question in ("Who are the headliners at the festival?", "What formats can I export my notes to?",
                     "Which languages is the app available in?", "Which cities does the ferry serve?",
                     "What are the drop-off points for donations?"):
        assert asks_for_several(question), question
    for question in ("What warranty comes with the Atlas?", "How many days is it open?", "Who is the CEO?",
                     "What time does the branch close on Saturdays?", "What address is the office at?",
                     "What bonus is paid?", "What basis is used?", "What are the opening hours on Saturday?"):
        assert not asks_for_several(question), question


def test_the_model_is_told_to_list_every_one_for_a_list_question_only(llm_factory):
    from tanglerag.methods.ledger.vetted import SEVERAL_RULE

    def system_prompt(question: str, *overrides: str) -> str:
        answer, _ = ask(llm_factory, FORMATS, question, None, *overrides)
        return answer.trace.calls[0].messages[0].content

    assert SEVERAL_RULE in system_prompt("What formats can I export my Tessel notes to?")
    assert SEVERAL_RULE not in system_prompt("What format did Tessel 1.0 export to?")
    assert SEVERAL_RULE not in system_prompt("What formats can I export my Tessel notes to?",
                                             "ledger.disabled_rules=[several-answers]")


CLOUD = {  # g-larkspur-cli-3: the README gives the sponsor tiers' prices, and says the hosted version has none yet
    "README.md": (("# larkspur\n\n## Sponsors\n\nSponsors: $5/month and the Bloom tier, which gets your logo here, is "
                  "$25/month.\n\n## larkspur Cloud\n\nA hosted version is in the works. We have not decided on pricing "
                  "yet; join the waiting list."), {"title": "larkspur"}, "$25/month"),
}


def test_a_value_a_document_says_is_not_decided_yet_is_unknown_with_the_sentence_as_the_reason(llm_factory):
    got, _ = ask(llm_factory, CLOUD, "How much will larkspur Cloud cost?")
    assert got.is_unknown
    assert got.trace.find(VettingStep).restated == ('undecided: a document says it is not decided yet ("We have not '
                                                    'decided on pricing yet;")')
    got, _ = ask(llm_factory, CLOUD, "How much does the Bloom sponsor tier of larkspur cost?")
    assert got.text.startswith("$25/month")  # the sponsors' sentence is more about this question
    got, _ = ask(llm_factory, CLOUD, "How much will larkspur Cloud cost?", None,
                 "ledger.disabled_rules=[asked-names, later-subject, undecided]")
    assert got.text.startswith("$25/month")


def test_an_older_or_undated_note_that_a_value_is_to_come_leaves_a_dated_answer_alone():
    from tanglerag.methods.ledger.undecided import undecided

    passages = as_retrieved([
        Passage(id="old", title="Friends newsletter", text="The board agreed the 2026 exhibition. Ticket prices for the "
                                                          "2026 exhibition will be announced in the new year."),
        Passage(id="new", title="Visit us", text="Museum tickets: £9 adults.")])
    question = "How much are tickets for the 2026 exhibition?"
    said = answer_value("£9 [2]")
    older = {"old": datetime.date(2025, 10, 1), "new": datetime.date(2026, 1, 10)}
    assert undecided(said, ["new"], passages, question, older) is None
    newer = {"old": datetime.date(2026, 2, 1), "new": datetime.date(2026, 1, 10)}
    assert undecided(said, ["new"], passages, question, newer).startswith("Ticket prices for the 2026 exhibition will")
    assert undecided(said, ["new"], passages, question, {"old": None, "new": datetime.date(2026, 1, 10)}) is None


def test_the_undecided_rule_reads_the_value_where_a_passage_states_it_when_the_cited_one_does_not():
    """g-larkspur-cli-3: the model cited the "larkspur Cloud" chunk for the $25/month of the chunk before it."""
    from tanglerag.methods.ledger.undecided import undecided

    chunks = as_retrieved([
        Passage(id="r#2", title="larkspur", text="## Sponsors\n\nThe Bloom tier is $25/month."),
        Passage(id="r#3", title="larkspur", text="## larkspur Cloud\n\nWe have not decided on pricing yet.")])
    assert undecided(answer_value("$25/month [2]"), ["r#3"], chunks, "How much will larkspur Cloud cost?",
                     {}) == "We have not decided on pricing yet."


def test_the_undecided_cue_reads_a_value_still_to_come_and_not_a_value_stated():
    from tanglerag.methods.ledger.undecided import _NOT_YET

    to_come = ["We have not decided on pricing yet;", "Ticket prices will be announced in the new year.",
               "No price yet, promise we'll tell you first", "Date to be confirmed once the team has capacity.",
               "Fees: TBC", "Pricing has not yet been set.", "We'll announce pricing before the beta opens.",
               "We will not publish opening hours for the annexe until the work is finished.",
               "We are not in a position to give a reopening date.", "Motorhomes: charges on application.",
               "Staff will measure the vehicle and quote on the day."]
    stated = ["Tickets will be £12 from May.", "The board announced a rise to £14.", "Prices were confirmed at £9.",
              "It has been decided: £30 a year.", "We publish the new prices on 1 May: £12.",
              "Apply on the day for a refund of £5."]
    assert all(_NOT_YET.search(s) for s in to_come)
    assert not any(_NOT_YET.search(s) for s in stated)


def test_a_value_a_change_replaced_before_the_asked_moment_is_read_as_its_replacement():
    """g-sorrel-court-2: minutes of June 2023 saying "£1,340 for 2023/24, up from £1,180", asked about January 2024:
    the change had happened by then, so replaced-value applies; minutes of March 2024 might postdate it."""
    from tanglerag.methods.ledger.moment import as_of
    from tanglerag.methods.ledger.vetted import changed_before

    moment = as_of("What was the service charge per flat in January 2024?")
    assert changed_before(moment, ["minutes"], {"minutes": datetime.date(2023, 6, 6)})
    assert not changed_before(moment, ["minutes"], {"minutes": datetime.date(2024, 3, 4)})
    assert not changed_before(moment, ["minutes"], {"minutes": None})  # undated: it may postdate the moment
    assert not changed_before(None, ["minutes"], {"minutes": datetime.date(2023, 6, 6)})


RUNNERS = {  # f-millbeck-runners-1: the club's undated page still gives the time its newsletter says was changed
    "newsletter.md": ("Sessions. Tuesday track is at 7pm now (not 6:30 - please ignore the old website).", {}, "7pm"),
    "club-website.html": ("Tuesday track. The Tuesday track session starts at 6:30pm at Fellside track.", {},
                          "6:30pm"),
}


def test_a_value_the_answers_document_names_as_replaced_is_set_aside_as_outdated_whatever_the_dates(llm_factory):
    question = "What time does the Tuesday track session start?"
    answer, _ = ask(llm_factory, RUNNERS, question)
    assert answer.text.splitlines() == ["7pm [1]", ("Set aside: 6:30pm: a cited document names this value as the one "
                                                    "a change replaced [2]")]
    step = answer.trace.find(ConflictStep)
    assert step.overall == "outdated" and step.reports[0].rule.startswith("named-former:")
    answer, _ = ask(llm_factory, RUNNERS, question, None, "ledger.disabled_rules=[asked-names, named-former]")
    assert answer.text == "7pm [1]"  # undated, neither page is older: nothing else sets the old time aside


def test_an_answer_from_a_page_whose_value_another_names_as_replaced_is_asked_again_without_it(llm_factory):
    question = "What time does the Tuesday track session start?"
    folder = dict(reversed(RUNNERS.items()))  # the old page retrieved first: the canned model answers from it
    answer, prompts = ask(llm_factory, folder, question)
    assert len(prompts) == 2 and "6:30pm at Fellside" not in prompts[1]
    assert answer.text.splitlines()[0] == "7pm [1]"
    assert answer.trace.find(VettingStep).left_out["club-website.html"].startswith("named-former:")


def test_an_afternoon_time_is_named_former_when_written_without_pm_and_no_other_time_is_moved():
    assert [v.magnitude for v in half_day(read_value("6:30pm"))] == [390.0]  # "not 6:30" names 6:30pm
    assert half_day(read_value("10:00")) == [] and half_day(read_value("12:30pm")) == []  # noon's hour is its own
    assert half_day(read_value("£6.30")) == []


def test_a_note_that_the_asked_places_value_is_not_published_outweighs_a_value_of_the_place_beside_it():
    """e-haverleigh-museum-2: the annexe's update names it, the main museum's e-mail states a time and not the annexe;
    each sentence holds as many of the question's words."""
    from tanglerag.methods.ledger.undecided import undecided

    passages = as_retrieved([
        Passage(id="update", title="Tidemill annexe - closure update",
                text="We will not publish opening hours for the annexe until the work is finished."),
        Passage(id="email", title="", text="From 2 April the museum will open at 10am.")])
    said, question = answer_value("10am [2]"), "What time does the Tidemill annexe of the museum open?"
    assert undecided(said, ["email"], passages, question, {}).startswith("We will not publish opening hours")
    assert undecided(said, ["email"], passages, "What time does the museum open?", {}) is None  # no name told apart


TRAIL = {  # g-cragmoor-tramway-trail-2: the model said "unknown" beside "The tramway was closed in 1938"
    "trail-sign.txt": (("CRAGMOOR TRAMWAY TRAIL. Over a million tons of Cragmoor stone came down to the wharf. The "
                        "tramway was closed in 1938 and the rails\nlifted for scrap during the war. Keep dogs on "
                        "leads."), {}, "1938"),
    "rivers.md": ("Pennick river walks. The Pennick ferry closed in 1961 and the river path opened in 1990.", {},
                  "1961"),
}


def looking_twice(folder: dict, prompts: list[str]) -> CannedBackend:
    """"unknown" to a prompt of whole passages; to one of sentences, the answer of the folder's document holding the
    first shown sentence, citing it."""
    def respond(messages):
        prompt = messages[-1].content
        prompts.append(prompt)
        first = prompt.split("Passages:\n", 1)[1].split("\n\n", 1)[0].split(": ", 1)[-1]
        found = [v for text, _, v in folder.values() if first in " ".join(text.split())]
        whole = any(" ".join(text.split()) in prompt for text, _, _ in folder.values())
        return json.dumps({"answer": "unknown", "passages": []} if whole or not found else
                          {"answer": found[0], "passages": [1]})
    return CannedBackend(responder=respond, structured=True)


def ask_twice(llm_factory, folder: dict, question: str, *overrides: str):
    prompts: list[str] = []
    llm = llm_factory(looking_twice(folder, prompts), persistent=False)
    llm.structured = "on"
    passages = [Passage(id=path, title=path, text=text, metadata={"path": path, **meta})
                for path, (text, meta, _) in folder.items()]
    method = make_method("vetted", resources(llm, Settings.load(overrides=list(overrides))))
    return method.answer(Question(text=question), as_retrieved(passages)), prompts


def test_an_unknown_is_asked_again_over_the_sentence_answering_in_the_questions_words(llm_factory):
    answer, prompts = ask_twice(llm_factory, TRAIL, "When did the Cragmoor tramway close?")
    assert len(prompts) == 2 and answer.text == "1938 [1]"
    assert ("[1] trail-sign.txt: The tramway was closed in 1938 and the rails lifted for scrap during the war.\n"
            in prompts[1]) and "Pennick ferry" not in prompts[1]  # the sentence whole across its wrapped line
    assert [p.passage.id for p in answer.passages] == ["trail-sign.txt", "rivers.md"]
    answer, prompts = ask_twice(llm_factory, TRAIL, "When did the Cragmoor tramway close?",
                                "ledger.disabled_rules=[asked-names, later-subject, second-look]")
    assert len(prompts) == 1 and answer.is_unknown


def test_a_sentence_about_another_thing_or_another_property_gets_no_second_look(llm_factory):
    for question in ("When did the Cragmoor ferry close?", "When did the Cragmoor tramway open?",
                     "When did the tramway close?"):  # no name asked about: nothing tells the thing apart
        answer, prompts = ask_twice(llm_factory, TRAIL, question)
        assert len(prompts) == 1 and answer.is_unknown, question


def test_minutes_that_name_the_change_are_not_set_aside_by_it_and_reducing_names_a_former_value():
    """h-fenmoor-quiz-league-1: the rules' "six" loses to the captain's "five now, not six"; the minutes "reducing
    ... from six to five" know of the change, so they stay."""
    from tanglerag.methods.ledger.dissent import names_as_former

    minutes = "The committee proposed reducing the maximum number of players from six to five. Six strong players won."
    assert names_as_former(read_value("6"), minutes) and not names_as_former(read_value("5"), minutes)
    assert not names_as_former(read_value("6"), "No more than six players may take part in any one match.")


def test_a_correction_is_read_from_its_files_name_and_its_titles_trailing_word():
    """h-quaybridge-surgery-1: "website-news-correction.html", "Flu clinic date - correction"."""
    from tanglerag.methods.ledger.kinds import document_kind

    assert document_kind({"path": "website-news-correction.html"}, "", "") == "correction"
    assert document_kind({"path": "a.html"}, "Flu clinic date - correction | Quaybridge Surgery", "") == "correction"
    assert document_kind({"path": "a.html"}, "Corrections policy", "We take corrections seriously.") is None


def test_the_second_looks_sentence_is_whole_and_stops_at_a_table_row_or_a_blank_line():
    from tanglerag.methods.ledger.second_look import _window

    own = "Doors open at 7 p.m. and the show starts at 8 p.m."
    assert _window(f"{own} Bring a coat.", own) == own  # its own stops are inside it
    assert _window("| Age | Subs |\n| U9 - U12 | £20 |\n| U13 - U16 | £25 |", "| U9 - U12 | £20 |") == "| U9 - U12 | £20 |"
    assert _window("Intro.\n\nThe tramway was closed in 1938 and the rails\nlifted. Keep dogs.",
                   "The tramway was closed in 1938 and the rails") == "The tramway was closed in 1938 and the rails lifted."


def test_an_undated_note_naming_what_the_question_names_outweighs_a_dated_figure_for_another_thing():
    """h-pipkin-budget-app-3: the waitlist's "We haven't set pricing yet" for Teams against the dated e-mail's price
    of Premium; for Premium itself the e-mail's figure stands."""
    from tanglerag.methods.ledger.undecided import undecided

    passages = as_retrieved([
        Passage(id="waitlist", title="Pipkin for Teams - join the waitlist",
                text="How much will it cost? We haven't set pricing yet."),
        Passage(id="email", title="Pipkin Premium", text="Pipkin Premium costs £39.99 a year from February.")])
    dates = {"waitlist": None, "email": datetime.date(2025, 1, 9)}
    said = answer_value("£39.99 [2]")
    assert undecided(said, ["email"], passages, "How much does Pipkin for Teams cost?", dates) == (
        "We haven't set pricing yet.")
    assert undecided(said, ["email"], passages, "How much does Pipkin Premium cost?", dates) is None


def test_a_watcher_hears_the_second_looks_passages_first_whole_and_the_first_order_again_if_it_is_unknown(llm_factory):
    from tanglerag.tracking import Tracker, track

    walks = {"walks.md": ("Cragmoor tramway walks: the Cragmoor tramway path runs 11 km to the quarry.",
                          {"date": "2024-05-01"}, "11 km"),
             "trail-sign.txt": (TRAIL["trail-sign.txt"][0], {"date": "2020-01-01"}, "1938")}  # the newer walk first
    heard: list[list[tuple[str, int]]] = []
    tracker = Tracker(on_event=lambda e: heard.append([(p["passage"]["id"], len(p["passage"]["text"]))
                                                       for p in e.data["passages"]]) if e.type == "passages" else None)
    question = "When did the Cragmoor tramway close?"
    with track(tracker):
        got, _ = ask_twice(llm_factory, walks, question)
    assert [i for i, _ in heard[0]] == ["walks.md", "trail-sign.txt"]
    assert got.text == "1938 [1]" and heard[-1] == [("trail-sign.txt", len(walks["trail-sign.txt"][0])),
                                                  ("walks.md", len(walks["walks.md"][0]))]  # [1] the sign, whole
    heard.clear()
    with track(tracker):
        got, _ = ask_twice(llm_factory, {**walks, "trail-sign.txt": (*walks["trail-sign.txt"][:2], "unknown")}, question)
    assert got.is_unknown and [i for i, _ in heard[1]] == ["trail-sign.txt", "walks.md"]
    assert [i for i, _ in heard[-1]] == ["walks.md", "trail-sign.txt"]  # the first answer's order again
