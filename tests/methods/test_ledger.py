"""``ledger`` on the canned LLM: one claim call per passage, quotes checked against the passage, copies counted once,
versions of one document paired, and every resolution policy deciding (or not) as declared, recorded in the report."""

import asyncio
import json

import pytest

from tanglerag.conflicts import ConflictStep
from tanglerag.errors import ConfigError, InputError
from tanglerag.methods.base import make_method
from tanglerag.methods.ledger.claims import read_claim_lines
from tanglerag.methods.ledger.moment import as_of
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage, Question
from tests.conftest import as_retrieved, resources

BORN = Question(text="When was Michael Jordan born?")
PLAYER = "Michael Jeffrey Jordan, the basketball player, was born on February 17, 1963 in Brooklyn."
TEXTS = {
    "a": PLAYER,
    "copy": PLAYER.replace("Brooklyn.", "Brooklyn, New York."),
    "bulls": "The Chicago Bulls guard Michael Jordan came into the world in 1963 and grew up in Wilmington.",
    "wrong": "A fan page claims that the basketball star Michael Jordan was born in 1998 somewhere in Texas.",
    "scientist": "Michael Irwin Jordan, the scientist at Berkeley, was born on February 25, 1956.",
}
CLAIMS = {  # what the model reads in each text: quote, answer, about
    "a": ("was born on February 17, 1963", "1963", "Michael Jordan, the basketball player"),
    "copy": ("was born on February 17, 1963", "1963", "Michael Jordan, the basketball player"),
    "bulls": ("came into the world in 1963", "1963", "Michael Jordan, the basketball player"),
    "wrong": ("was born in 1998", "1998", "Michael Jordan, the basketball player"),
    "scientist": ("was born on February 25, 1956", "1956", "Michael I. Jordan, the scientist"),
}


def docs(*names: str, metadata: dict[str, dict] | None = None) -> list[Passage]:
    return [Passage(id=n, text=TEXTS[n], metadata=(metadata or {}).get(n, {})) for n in names]


def backend(claims: dict[str, tuple[str, str, str]] | None = None, prior: str = "unknown",
            as_json: bool = True) -> CannedBackend:
    """Claims by the text in the prompt's document; the prior call gets ``prior``."""
    table = claims or CLAIMS

    def respond(messages):
        prompt = messages[-1].content
        if "Document:" not in prompt:
            return json.dumps({"answer": prior}) if as_json else prior
        document = prompt.split("Document: ", 1)[1].split("\n\nQuestion:", 1)[0]
        quote, answer, about = next(table[n] for n, text in TEXTS.items() if text == document)
        if as_json:
            return json.dumps({"quote": quote, "answer": answer, "about": about})
        return f"Quote: {quote}\nAnswer: {answer}\nAbout: {about}"
    return CannedBackend(responder=respond, structured=as_json)


def ask(llm_factory, passages, *overrides, canned=None, question=BORN):
    canned = canned or backend()
    llm = llm_factory(canned, persistent=False)
    llm.structured = "on" if canned.structured else "off"
    method = make_method("ledger", resources(llm, Settings.load(overrides=list(overrides))))
    answer = method.answer(question, as_retrieved(passages))
    return answer, answer.trace.find(ConflictStep), canned


def verdicts(step):
    return {side.answer: side.verdict for report in step.reports for side in report.sides}


def test_one_call_per_passage_reads_each_claim_and_checks_its_quote(llm_factory):
    made_up = {**CLAIMS, "wrong": ("Jordan was born in 1998 in Texas", "1998", "the player"),
               "bulls": ("he was born in Wilmington", "1962", "the player")}
    answer, step, canned = ask(llm_factory, docs("a", "bulls", "wrong"), canned=backend(made_up))
    assert len(canned.requests) == 3 and answer.usage.stages["claims"].llm_calls == 3
    assert all(len([d for d in TEXTS.values() if d in m[-1].content]) == 1 for m, _ in canned.requests)
    claims = {c.passage_id: c for c in step.claims}
    assert claims["a"].supported and claims["a"].grounded
    assert not claims["wrong"].supported and claims["wrong"].answer_found  # reworded quote, answer in the passage
    assert not claims["bulls"].grounded  # neither the quote nor "1962" is in the passage: the model's misreading
    assert "1962" not in {s.answer for r in step.reports for s in r.sides} and "1962" not in answer.text


def test_a_passage_that_names_an_answer_it_was_not_read_for_corroborates_it(llm_factory):
    unsure = {**CLAIMS, "bulls": ("", "unknown", "")}  # the model read nothing in "bulls", which says 1963
    answer, step, _ = ask(llm_factory, docs("a", "bulls", "wrong"), canned=backend(unsure))
    assert [c.passage_id for c in step.claims] == ["a", "wrong"]
    assert verdicts(step) == {"1963": "kept", "1998": "rejected"} and step.reports[0].rule == "witnesses 2 vs 1"
    assert answer.citations == ["a", "wrong"]  # cited where it was read (corroborated by "bulls"), and set aside
    assert answer.text.splitlines()[1] == ("Set aside: 1998 (Michael Jordan, the basketball player): fewer "
                                           "independent sources (1 against 2); no source named, undated [3]")
    _, copies, _ = ask(llm_factory, docs("a", "copy", "wrong"), canned=backend(unsure))
    assert _trial(copies.reports[0], "witnesses") == "witnesses tie at 1"  # a copy that names it is still one source


def test_same_thing_versions_lets_independent_documents_answer_side_by_side(llm_factory):
    answer, step, _ = ask(llm_factory, docs("a", "bulls", "wrong"), "ledger.same_thing=versions")
    assert [r.kind for r in step.reports] == ["complementary"] and [p.answer for p in answer.parts] == ["1963", "1998"]
    TEXTS["version"] = PLAYER.replace("1963", "1964")
    claims = {**CLAIMS, "version": ("was born on February 17, 1964", "1964", "Michael Jordan, the basketball player")}
    try:
        _, versions, _ = ask(llm_factory, docs("a", "version", "bulls"), "ledger.same_thing=versions",
                             canned=backend(claims))
    finally:
        del TEXTS["version"]
    assert verdicts(versions) == {"1963": "kept", "1964": "rejected"}  # versions conflict: bulls says 1963 too


def _trial(report, policy):
    """What ``policy`` found in ``report`` (its place in the order is the settings', not the test's)."""
    return next(t.outcome for t in report.trials if t.policy == policy)


def test_copies_of_one_document_count_once(llm_factory):
    _, step, _ = ask(llm_factory, docs("a", "copy", "wrong"))
    assert step.copies == [["a", "copy"]]
    assert verdicts(step) == {"1963": "disputed", "1998": "disputed"}  # 1 witness each: a copy adds none
    assert [_trial(step.reports[0], p) for p in ("newest", "authority", "witnesses")] == [
        "no date for 1963, 1998", "no authority for 1963, 1998", "witnesses tie at 1"]


def test_more_independent_witnesses_win_and_other_things_stand_beside_them(llm_factory):
    answer, step, _ = ask(llm_factory, docs("a", "copy", "bulls", "wrong", "scientist"))
    conflict = next(r for r in step.reports if r.kind != "complementary")
    assert conflict.kind == "misinformation" and conflict.rule == "witnesses 2 vs 1"
    assert verdicts(step) == {"1963": "kept", "1998": "rejected", "1956": "kept"}
    assert answer.text == ("1963 (Michael Jordan, the basketball player) [1][2][3]\n"
                           "1956 (Michael I. Jordan, the scientist) [5]\n"
                           "Set aside: 1998 (Michael Jordan, the basketball player): fewer independent sources "
                           "(1 against 2); no source named, undated [4]")
    assert answer.citations == ["a", "copy", "bulls", "scientist", "wrong"] and step.overall == "misinformation"
    assert [p.answer for p in answer.parts] == ["1963", "1956"]


def test_different_things_are_complementary_not_conflicting(llm_factory):
    answer, step, _ = ask(llm_factory, docs("a", "scientist"))
    assert [r.kind for r in step.reports] == ["complementary"] and step.headline() is None
    assert [p.answer for p in answer.parts] == ["1963", "1956"]


def test_an_about_that_only_repeats_its_answer_is_read_as_what_the_question_asks_about(llm_factory):
    claims = {**CLAIMS, "a": ("was born on February 17, 1963", "1963", "Michael Jordan"),
              "bulls": ("came into the world in 1963", "1963", "Michael Jordan"),
              "wrong": ("was born in 1998", "1998", "1998")}
    answer, step, _ = ask(llm_factory, docs("a", "bulls", "wrong"), canned=backend(claims))
    assert [r.kind for r in step.reports] == ["misinformation"] and step.reports[0].rule == "witnesses 2 vs 1"
    assert [p.answer for p in answer.parts] == ["1963"]


def test_show_all_disputes_every_side_and_show_disputed_decides_which_are_listed(llm_factory):
    answer, step, _ = ask(llm_factory, docs("a", "wrong"), "ledger.policies=[show-all]")
    assert verdicts(step) == {"1963": "disputed", "1998": "disputed"} and step.overall == "conflicting_opinions"
    assert answer.text.splitlines() == ["1963 (Michael Jordan, the basketball player, disputed) [1]",
                                        "1998 (Michael Jordan, the basketball player, disputed) [2]"]
    never, held, _ = ask(llm_factory, docs("a", "wrong"), "ledger.policies=[show-all]", "ledger.show_disputed=never")
    assert never.is_unknown and held.withheld == ["1963", "1998"]  # nothing the evidence settles is asserted
    assert "(2 held back)" in held.headline()


def test_a_dispute_between_versions_of_one_document_is_held_back_unless_all_are_shown(llm_factory):
    TEXTS["version"] = PLAYER.replace("1963", "1964")
    claims = {**CLAIMS, "version": ("was born on February 17, 1964", "1964", "Michael Jordan, the basketball player")}
    try:
        answer, step, _ = ask(llm_factory, docs("a", "version", "scientist"), "ledger.policies=[show-all]",
                              canned=backend(claims))
        every, _, _ = ask(llm_factory, docs("a", "version"), "ledger.policies=[show-all]",
                          "ledger.show_disputed=always", canned=backend(claims))
    finally:
        del TEXTS["version"]
    assert step.withheld == ["1963", "1964"] and [p.answer for p in answer.parts] == ["1956"]
    assert [p.answer for p in every.parts] == ["1963", "1964"]


DATED = {"a": {"date": "2019-03-01", "authority": "news"}, "wrong": {"date": 2023, "authority": 3}}


def test_newest_settles_a_tie_by_date_and_an_as_of_year_picks_the_answer_valid_then(llm_factory):
    _, step, _ = ask(llm_factory, docs("a", "wrong", metadata=DATED), "ledger.policies=[witnesses,newest]")
    report = step.reports[0]
    assert report.kind == "outdated" and verdicts(step) == {"1963": "rejected", "1998": "kept"}
    assert report.rule == "newest 2023 vs 2019-03-01" and step.documents["a"].authority == 1.0
    as_of = Question(text="When was Michael Jordan born, as of 2020?")
    _, then, _ = ask(llm_factory, docs("a", "wrong", metadata=DATED), "ledger.policies=[newest]", question=as_of)
    assert verdicts(then) == {"1963": "kept", "1998": "rejected"}
    assert then.reports[0].rule == "as of 2020: newest 2019-03-01; 1998 dated after 2020"
    _, undated, _ = ask(llm_factory, docs("a", "wrong"), "ledger.policies=[newest]")
    assert verdicts(undated) == {"1963": "disputed", "1998": "disputed"}
    assert undated.reports[0].trials[0].outcome == "no date for 1963, 1998"


def test_an_as_of_day_excludes_answers_dated_later_that_year_and_dates_come_before_witnesses(llm_factory):
    dated = {"a": {"date": "2019-05-09"}, "copy": {"date": "2019-05-16"}, "bulls": {"date": "2019-05-16"},
             "wrong": {"date": "2019-05-02"}}
    claims = {**CLAIMS, "copy": ("was born on February 17, 1963", "1963", "Michael Jordan, the basketball player"),
              "wrong": ("was born in 1998", "1998", "Michael Jordan, the basketball player")}
    day = Question(text="When was Michael Jordan born, as of May 10, 2019?")
    _, step, _ = ask(llm_factory, docs("a", "wrong", metadata=dated), question=day, canned=backend(claims))
    assert verdicts(step) == {"1963": "kept", "1998": "rejected"}
    assert step.reports[0].rule == "as of 2019-05-10: newest 2019-05-09 vs 2019-05-02"
    late = {**dated, "a": {"date": "2019-05-16"}}
    _, after, _ = ask(llm_factory, docs("a", "wrong", metadata=late), question=day, canned=backend(claims))
    assert verdicts(after) == {"1963": "rejected", "1998": "kept"}  # 1963 is dated after the day asked about
    older = {"a": {"date": "2018"}, "bulls": {"date": "2018"}, "wrong": {"date": "2023"}}
    _, newer, _ = ask(llm_factory, docs("a", "bulls", "wrong", metadata=older))  # 2 witnesses, but older
    assert verdicts(newer) == {"1963": "rejected", "1998": "kept"} and newer.reports[0].kind == "outdated"


def test_each_document_is_asked_without_the_as_of_clause_which_the_dates_apply(llm_factory):
    literal = backend()  # a model that, asked "as of 2020", reads a document as not answering: the 1.5B one did

    def respond(messages):
        if "as of" in messages[-1].content:
            return json.dumps({"quote": "", "answer": "unknown", "about": "unknown"})
        return literal.responder(messages)
    canned = CannedBackend(responder=respond, structured=True)
    as_of_2020 = Question(text="When was Michael Jordan born, as of 2020?")
    answer, step, _ = ask(llm_factory, docs("a", "wrong", metadata=DATED), "ledger.policies=[newest]",
                          question=as_of_2020, canned=canned)
    assert all("When was Michael Jordan born?" in m[-1].content for m, _ in canned.requests)
    assert verdicts(step) == {"1963": "kept", "1998": "rejected"} and answer.text.startswith("1963")


def test_a_question_that_names_a_date_makes_its_dated_answers_compete_whatever_they_are_about(llm_factory):
    dated = {"a": {"date": "2019"}, "scientist": {"date": "2015"}}
    _, plain, _ = ask(llm_factory, docs("a", "scientist", metadata=dated))
    assert [r.kind for r in plain.reports] == ["complementary"]  # two people of one name: both stand
    then = Question(text="When was Michael Jordan born, as of 2016?")
    answer, step, _ = ask(llm_factory, docs("a", "scientist", metadata=dated), question=then)
    assert verdicts(step) == {"1963": "rejected", "1956": "kept"} and step.reports[0].kind == "outdated"
    assert [p.answer for p in answer.parts] == ["1956"]


def test_an_about_of_only_the_answer_and_function_words_is_read_as_the_question(llm_factory):
    claims = {**CLAIMS, "a": ("was born on February 17, 1963", "1963", "When Michael Jordan was born"),
              "wrong": ("was born in 1998", "1998 and 1999", "1998 and 1999")}
    _, step, _ = ask(llm_factory, docs("a", "wrong"), canned=backend(claims))
    assert [r.kind for r in step.reports] == ["conflicting_opinions"]  # one thing: the question's, disputed


def test_versions_of_one_document_conflict_whatever_they_say_they_are_about(llm_factory):
    TEXTS["version"] = PLAYER.replace("1963", "1964")
    claims = {**CLAIMS, "version": ("was born on February 17, 1964", "1964", "the Bulls' number 23")}
    try:
        _, step, _ = ask(llm_factory, docs("version", "a", metadata={"version": {"date": "2024"}, "a": {"date": "2020"}}),
                         "ledger.policies=[witnesses,newest]", canned=backend(claims))
    finally:
        del TEXTS["version"]
    assert step.copies == [["a", "version"]]  # one document, oldest version first
    assert step.reports[0].kind == "outdated" and verdicts(step) == {"1964": "kept", "1963": "rejected"}


def test_authority_settles_by_number_or_named_tier(llm_factory):
    _, step, _ = ask(llm_factory, docs("a", "wrong", metadata=DATED), "ledger.policies=[authority]")
    assert verdicts(step) == {"1963": "rejected", "1998": "kept"} and step.reports[0].rule == "authority 3 vs 1"
    tiers = ["ledger.policies=[authority]", "ledger.authority_tiers={news: 5}"]
    _, local, _ = ask(llm_factory, docs("a", "wrong", metadata=DATED), *tiers)
    assert verdicts(local) == {"1963": "kept", "1998": "rejected"}


def test_prior_asks_the_model_once_without_passages_and_keeps_the_side_it_names(llm_factory):
    answer, step, canned = ask(llm_factory, docs("a", "wrong"), "ledger.policies=[prior,show-all]",
                               canned=backend(prior="1963"))
    prior_calls = [m for m, _ in canned.requests if "Document:" not in m[-1].content]
    assert len(prior_calls) == 1 and all(text not in prior_calls[0][-1].content for text in TEXTS.values())
    assert verdicts(step) == {"1963": "kept", "1998": "rejected"} and answer.usage.stages["prior"].llm_calls == 1
    _, unsure, _ = ask(llm_factory, docs("a", "wrong"), "ledger.policies=[prior,show-all]", canned=backend(prior="1950"))
    assert [t.policy for t in unsure.reports[0].trials] == ["prior", "show-all"]
    _, agreed, quiet = ask(llm_factory, docs("a", "bulls"), "ledger.policies=[prior]", canned=backend(prior="1963"))
    assert agreed.reports == [] and all("Document:" in m[-1].content for m, _ in quiet.requests)


def test_unreadable_metadata_is_refused_before_any_call(llm_factory):
    canned = backend()
    with pytest.raises(InputError, match="metadata field 'date': cannot read 'last spring'"):
        ask(llm_factory, docs("a", metadata={"a": {"date": "last spring"}}), canned=canned)
    assert canned.requests == []


def test_a_stored_tier_the_settings_no_longer_name_is_one_line_naming_the_passage_and_the_setting(llm_factory):
    """Tiers are stored as written and mapped when read: setting ``ledger.authority_tiers`` replaces the defaults, so
    an index written under them can hold a tier the settings now lack. The user must learn which passage and which
    setting, not only that some tier is unknown."""
    canned = backend()
    with pytest.raises(InputError) as refused:
        ask(llm_factory, docs("a", metadata={"a": {"authority": "community"}}), "ledger.authority_tiers={gov: 4}",
            canned=canned)
    assert str(refused.value) == ("passage 'a': metadata field 'authority': unknown tier 'community' (a number, or "
                                  "one of: gov); ledger.authority_tiers names the tiers, and setting it replaces the "
                                  "default ones (official, reference, news, community)")
    assert canned.requests == []


def test_text_replies_are_read_line_by_line(llm_factory):
    answer, step, _ = ask(llm_factory, docs("a", "scientist"), canned=backend(as_json=False))
    assert [c.answer for c in step.claims] == ["1963", "1956"] and all(c.supported for c in step.claims)
    assert read_claim_lines("Born in 1963.").answer == "Born in 1963"
    assert read_claim_lines("Quote: x\nAnswer: unknown").answer == "unknown" and read_claim_lines("  ") is None


def test_settings_refuse_a_policy_twice_and_no_passages_abstain(llm_factory):
    with pytest.raises(ConfigError, match="listed twice"):
        Settings.load(overrides=["ledger.policies=[witnesses,witnesses]"])
    answer, step, canned = ask(llm_factory, [])
    assert answer.is_unknown and step is None and canned.requests == []
    assert as_of("Who led the party in 2010, as of 2015?").text == "2015" and as_of("Who led it?") is None
    assert as_of("Next episode as of May 02, 2019?").last_day.isoformat() == "2019-05-02"
    assert as_of("Who won, as of 14 July 2018?").text == "2018-07-14" and as_of("as of 2019-02-30?") is None


def test_claims_from_separate_keeps_each_passage_answer_and_the_policies_reject_the_refuted_one(llm_factory):
    """``ledger.claims_from=separate``: the separate baseline's answer for each passage alone is the claim (its
    descriptor what it is about, no quote), so the witnesses count as with quotes and set the planted 1998 aside."""
    def respond(messages):
        context = messages[-1].content.split("[1] ", 1)[1]
        name = next(n for n, text in TEXTS.items() if context.startswith(text))
        _, answer, about = CLAIMS[name]
        return "unknown" if name == "copy" else f"{answer} | {about} [1]"
    canned = CannedBackend(responder=respond)
    answer, step, _ = ask(llm_factory, docs("a", "copy", "bulls", "wrong", "scientist"),
                          "ledger.claims_from=separate", canned=canned)
    assert len(canned.requests) == 5 and all(m[-1].content.count("[1] ") == 1 for m, _ in canned.requests)
    assert [(c.passage_id, c.answer, c.quote) for c in step.claims] == [
        ("a", "1963", ""), ("bulls", "1963", ""), ("wrong", "1998", ""), ("scientist", "1956", "")]
    assert all(c.answer_found and not c.supported for c in step.claims)  # grounded by the answer's words alone
    assert verdicts(step) == {"1963": "kept", "1998": "rejected", "1956": "kept"}
    assert [p.answer for p in answer.parts] == ["1963", "1956"] and "Set aside: 1998" in answer.text


@pytest.mark.parametrize("claims_from", ["quotes", "separate"])
def test_awaited_answer_is_the_sync_facades_with_its_calls_in_the_same_order(llm_factory, claims_from):
    """``aanswer`` on a loop of the test's own gives what ``answer`` gives through the portal: the claims batch (or
    the separate baseline, one passage after another), then the prior, recorded in one order both ways."""
    def separate(messages):
        if "[1] " not in messages[-1].content:  # the prior: no passage
            return "1963"
        context = messages[-1].content.split("[1] ", 1)[1]
        _, answer, about = CLAIMS[next(n for n, text in TEXTS.items() if context.startswith(text))]
        return f"{answer} | {about} [1]"

    def answered(drive):
        canned = backend(prior="1963") if claims_from == "quotes" else CannedBackend(responder=separate)
        llm = llm_factory(canned, persistent=False)
        llm.structured = "on" if canned.structured else "off"
        settings = Settings.load(overrides=["ledger.policies=[prior,show-all]", f"ledger.claims_from={claims_from}"])
        return drive(make_method("ledger", resources(llm, settings))), canned

    hits = as_retrieved(docs("a", "wrong", "scientist"))
    awaited, canned = answered(lambda m: asyncio.run(m.aanswer(BORN, hits)))
    facade, _ = answered(lambda m: m.answer(BORN, hits))
    assert (awaited.text, awaited.citations, awaited.parts) == (facade.text, facade.citations, facade.parts)
    assert [c.messages for c in awaited.trace.calls] == [c.messages for c in facade.trace.calls]
    assert len(canned.requests) == 4 and awaited.trace.calls[-1].stage == "prior" and awaited.parts


def test_claims_read_together_in_one_call_name_their_passages_and_quote_the_sentence_holding_them():
    """``ledger.claims_from=together`` (issue 69, the ledger in seconds): one call over every passage, a line per
    passage that answers; each claim's quote is its passage's sentence that holds the answer."""
    import asyncio

    from tanglerag.methods.ledger.claims import read_claims_together
    from tanglerag.testing import canned_llm
    from tanglerag.types import Passage, RetrievedPassage

    hits = [RetrievedPassage(passage=Passage(id=pid, text=text), score=1.0, rank=n)
            for n, (pid, text) in enumerate([("policy", "Leave rules. Staff take 20 days a year."),
                                              ("tea", "Green tea is steeped at 80 degrees."),
                                              ("memo", "From 2025 staff take 25 days.")], 1)]
    llm = canned_llm(default="[1] 20 days | staff leave\n[3] 25 days | staff leave from 2025\n[9] 1 day | nothing")
    claims, unread = asyncio.run(read_claims_together(llm, "How many days of leave?", hits, 100, 48))
    assert unread == [] and [(c.passage_id, c.answer, c.about) for c in claims] == [
        ("policy", "20 days", "staff leave"), ("memo", "25 days", "staff leave from 2025")]  # [9] names no passage
    assert claims[0].quote == "Staff take 20 days a year." and claims[0].supported and claims[0].answer_found
    ((messages, params),) = llm.backend.requests
    assert "[3] From 2025 staff take 25 days." in messages[-1].content and params.max_tokens == 3 * 48


def test_brief_claims_put_the_question_first_write_no_quote_and_quote_the_sentence_holding_the_answer():
    """``ledger.claims_from=brief`` (issue 69): a call for each passage, the question and instructions before the
    document so that one question's calls share that prefix, and no quote asked for."""
    import asyncio

    from tanglerag.methods.ledger.claims import read_claims
    from tanglerag.testing import canned_llm
    from tanglerag.types import Passage, RetrievedPassage

    hits = [RetrievedPassage(passage=Passage(id=pid, text=text), score=1.0, rank=n)
            for n, (pid, text) in enumerate([("policy", "Leave rules. Staff take 20 days a year."),
                                              ("tea", "Green tea is steeped at 80 degrees.")], 1)]
    llm = canned_llm([("Leave rules", "Answer: 20 days\nAbout: staff leave")], default="Answer: unknown")
    claims, unread = asyncio.run(read_claims(llm, "How many days of leave?", hits, 100, 96, brief=True))
    assert unread == [] and [(c.passage_id, c.answer, c.about) for c in claims] == [("policy", "20 days", "staff leave")]
    assert claims[0].quote == "Staff take 20 days a year." and claims[0].supported and claims[0].answer_found
    prompts = [messages[-1].content for messages, _ in llm.backend.requests]
    assert [p.split("\n\nDocument: ")[0] for p in prompts] == [prompts[0].split("\n\nDocument: ")[0]] * 2
    assert prompts[0].startswith("Question: How many days of leave?") and "Quote" not in prompts[0]
