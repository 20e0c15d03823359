"""``vetted``: the ledger's document rules, then ``concat``'s one call; a question costs what ``concat`` costs.

The ledger reads a claim from every passage before any rule can act (a call each, or one long call), which on a CPU
is most of a minute. Most of what its rules decide needs no claim: whether a document is a draft, dated after the
question's moment, an older version of another, a README beside release notes, a correction, a register, declared
from outside the trusted folders; and how old, how official and how on topic it is (``vetting``). ``vetted`` applies
those to the passages, shows the model the rest ranked (believable first) with a label each (date, kind, source,
"unverified"), and has it answer as ``concat`` does; then, without the model, the passages on topic that state another
value of the answer's kind for a reason a rule gives are set aside in the answer and the report (``dissent``). When
the answer rests on a passage a rule ranks below such a passage (an older page against a newer one, a README against
release notes, an unverified declaration against a trusted one), it is asked once more without the passages
overruled; when it answers "unknown" beside a sentence that answers in the question's own words, it is asked once more
over such sentences alone (``second_look``). What it cannot do that the ledger can: tell two people of one name apart
when both answer, or dispute answers that are no value; those questions fall to ``concat``'s reading, which the
ranking still helps.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from tanglerag.conflicts import ConflictStep
from tanglerag.methods.base import CONFLICT_METRICS, Method, MethodOutput
from tanglerag.methods.ledger.banded import asked_band
from tanglerag.methods.ledger.config import LedgerConfig
from tanglerag.methods.ledger.dissent import (
    answer_value,
    asks_a_moment,
    dissent,
    key_sentences,
    later_subject,
    overruled,
    restated,
    with_stated_unit,
)
from tanglerag.methods.ledger.kinds import about_what_it_corrects, asks_about_drafts
from tanglerag.methods.ledger.method import (
    described,
    document_kinds,
    document_relevance,
    provenance,
    read_passages,
    release_dates,
)
from tanglerag.methods.ledger.moment import AsOf, as_of, asks_now, names_a_year, timeless
from tanglerag.methods.ledger.relevance import names_every_name
from tanglerag.methods.ledger.scoped import asked_scope
from tanglerag.methods.ledger.second_look import answering_sentences
from tanglerag.methods.ledger.time_range import range_end
from tanglerag.methods.ledger.undecided import undecided
from tanglerag.methods.ledger.values import asks_for_several
from tanglerag.methods.ledger.vetting import Documents, Vetting, vet
from tanglerag.stages.generate import answer_params, cited_answer_decision, cited_answer_messages, read_cited_answer
from tanglerag.tracking import current_tracker, record_step, stage, streamed_answer, token_sink
from tanglerag.trust import entry_for
from tanglerag.types import Question, RetrievedPassage

VETTED_RULE = ("The passages are ranked, the most believable first: on the question's topic, newer, corrected or "
               "official before older, unverified or superseded. Where they disagree, answer as the first passage "
               "that answers does.")

SEVERAL_RULE = ("The question asks for more than one thing: give every one the passages name, each with the numbers "
                "of the passages naming it. Passages naming different ones do not disagree.")


def labelled(vetting: Vetting) -> list[RetrievedPassage]:
    """The shown passages as the prompt shows them: each one's label before its title ("(2024-03-01; release
    notes) Tessera"). Copies: the answer cites and lists the passages as they are."""
    out = []
    for hit in vetting.shown:
        label = vetting.labels.get(hit.passage.id)
        title = f"({label}) {hit.passage.title}".strip() if label else hit.passage.title
        out.append(hit.model_copy(update={"passage": hit.passage.model_copy(update={"title": title})}))
    return out


def _with_names(vetting: Vetting, passages: list[RetrievedPassage], asked: str) -> Vetting:
    """The vetting with the passages naming every name the question asks about in their words (``named``) and in
    their title or path (``titled``), for rule ``named-newest``."""
    def naming(words: Callable[[RetrievedPassage], str]) -> frozenset[str]:
        return frozenset(h.passage.id for h in passages if names_every_name(asked, words(h)))

    return replace(vetting, named=naming(described),
                   titled=naming(lambda h: f"{h.passage.title} {h.passage.metadata.get('path', '')}"))


def _show_ranked(vetting: Vetting, passages: list[RetrievedPassage]) -> None:
    """Tell a watcher the passages in the order the answer about to stream numbers them (the shown ones, then those
    left out): listed as retrieved, its "[1]" pointed a tester in the inspector at another document until the answer
    ended."""
    tracker = current_tracker()
    if tracker is not None:
        tracker.retrieved(vetting.order(passages))


def _say_asked_again(vetting: Vetting, losers: dict[str, str]) -> None:
    """Tell a reader watching the first answer come why a second follows (its line, between the two): a streamed
    answer cannot be taken back, and two answers one after the other with nothing between read as a stutter. The
    passages are named by title, not by number: the second answer numbers them anew."""
    with streamed_answer():
        say = token_sink()
    if say is not None:
        names = ", ".join(h.passage.title or h.passage.id for h in vetting.shown if h.passage.id in losers)
        say(f"(asked again without {names}: {'; '.join(why.split(': ', 1)[-1] for why in losers.values())})")


def _say_second_look(sentences: list[RetrievedPassage]) -> None:
    """Tell a reader who saw "unknown" come why an answer follows: the sentences asked about, by their passages'
    titles."""
    with streamed_answer():
        say = token_sink()
    if say is not None:
        say(f"(asked again over the sentences of {', '.join(h.passage.title or h.passage.id for h in sentences)} "
            "that answer in the question's words)")


def read_again(text: str, citations: list[str], vetting: Vetting, asked: str, dates: dict[str, datetime.date | None],
               moment: bool = False) -> tuple[str, list[str], bool]:
    """The answer's value read again where a rule says the model misread it, without the model (each rule's words
    in ``vetting.restated``): a bare number given its unit; a value corrected in the text or stated nowhere
    (``restated``); the other end of a range of times than asked (``range-end``); one stated for another weight,
    length, age or age group than the question names (``asked-band``).
    One stated for another day, season, ticket, plan or year than asked (``asked-scope``) or another thing's
    (``later-subject``), when the documents state none for what was asked, or one a document says is not decided yet
    (``undecided``; ``dates``: each passage's document date), is unknown (the third item).
    ``moment``: the question names a year or an "as of" date (``asks_a_moment`` of its words before ``timeless``)
    that a change its cited passages report may postdate (``changed_before``), so a value the change replaced may be
    the one asked for and ``replaced-value`` stays off."""
    off = vetting.off
    text, vetting.restated = restated(with_stated_unit(text, citations, vetting.shown, asked), citations,
                                      vetting.shown, asked, off | ({"replaced-value"} if moment else set()))
    if "asked-scope" not in off:
        text, citations, scoped, unknown = asked_scope(text, citations, vetting.shown, asked)
        vetting.restated = scoped or vetting.restated
        if unknown:
            return text, citations, True
    if "range-end" not in off:
        text, why = range_end(text, citations, vetting.shown, asked)
        vetting.restated = why or vetting.restated
    if "asked-band" not in off:
        text, citations, banded, _ = asked_band(text, citations, vetting.shown, asked, vetting.relevant)
        vetting.restated = banded or vetting.restated
    if "later-subject" not in off and (why := later_subject(text, citations, vetting.shown, asked)):
        vetting.restated = why
        return text, citations, True
    said = answer_value(text)
    if "undecided" not in off and said is not None and \
            (words := undecided(said, citations, vetting.shown, asked, dates)) is not None:
        vetting.restated = f"undecided: a document says it is not decided yet (\"{words}\")"
        return text, citations, True
    return text, citations, False


def changed_before(moment: AsOf | None, cited: list[str], dates: dict[str, datetime.date | None]) -> bool:
    """Whether every cited passage is dated on or before the asked ``moment``: a change they report had happened by
    then, so the value it replaced was no longer the one in force ("The charge is £1,340 for 2023/24, up from
    £1,180", minutes of June 2023, asked about January 2024: g-sorrel-court-2) and ``replaced-value`` applies."""
    return moment is not None and bool(cited) and all(
        (day := dates.get(c)) is not None and day <= moment.last_day for c in cited)


class VettedMethod(Method):
    name: ClassVar[str] = "vetted"
    paper: ClassVar[str] = "ours"
    description: ClassVar[str] = ("the ledger's document rules without its claims (drafts, as-of dates, older versions "
                                  "left out; the rest ranked by topic, trust, kind, authority and date, each labelled), "
                                  "then one cited answer; passages that state another value for a rule's reason are "
                                  "set aside and reported")
    calls: ClassVar[str] = ("1 (2 when the rules overrule the passage the first answer rests on, or when it is "
                            "\"unknown\" beside a sentence answering in the question's words)")
    default_metrics: ClassVar[tuple[str, ...]] = CONFLICT_METRICS

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return MethodOutput.abstain()
        off = frozenset(self.settings.section(LedgerConfig).disabled_rules)
        closing = "month-moment" not in off
        asked = timeless(question.text, closing)
        vetting, read = await self._vet(question, asked, passages, off)
        if not vetting.shown or ("off-topic" not in off and not vetting.relevant & {h.passage.id for h in vetting.shown}):
            record_step(vetting.step())  # nothing left, or nothing on the question's topic: the documents do not say
            return MethodOutput.abstain(vetting.order(passages))
        _show_ranked(vetting, passages)
        vetting, (text, citations, unknown) = await self._answered(question, asked, vetting, read, passages)
        if not unknown:  # a value the rules read as another thing's, with none for what was asked: unknown
            dates = {pid: meta.date for pid, meta in read.metas.items()}
            moment = asks_a_moment(question.text, closing) and not changed_before(
                as_of(question.text, closing), citations, dates)
            text, citations, withdrawn = read_again(text, citations, vetting, asked, dates, moment)
            if withdrawn:
                record_step(vetting.step())
                return MethodOutput.abstain(vetting.order(passages))
        record_step(vetting.step())
        order = vetting.order(passages)
        text, reports, aside = (text, [], []) if unknown else dissent(text, citations, order, asked, vetting,
                                                                      read.metas, read.kinds)
        if not self.settings.conflicts.report:  # asked for, the ledger's report on the claims is recorded instead
            record_step(ConflictStep(claims=[], reports=reports, policies=["vetted"],
                                     documents={pid: m for pid, m in read.metas.items() if not m.is_empty()},
                                     kinds=dict(read.kinds), trust=read.notes))
        aside_ids = {p for r in reports for s in r.sides[1:] if s.verdict == "rejected" for p in s.passages}
        cited = [c for c in citations if c not in aside_ids] + [p for r in reports for s in r.sides[1:]
                                                                 for p in s.passages]
        return MethodOutput("\n".join([text, *aside]), list(dict.fromkeys(cited)), unknown=unknown, passages=order)

    async def _vet(self, question: Question, asked: str, passages: list[RetrievedPassage],
                   off: frozenset[str]) -> tuple[Vetting, Documents]:
        """What each passage's document is (the ledger's provenance, kinds, relevance and copies), then the vetting."""
        config = self.settings.section(LedgerConfig)
        trust = self.settings.trust if "trust" not in off else None
        metas, notes, unverified = provenance(passages, config.authority_tiers, trust, "text-dates" not in off,
                                             "name-dates" not in off)
        index = self.resources.index
        heads = index.heads([h.passage for h in passages]) if index is not None and "document-heads" not in off \
            else {}
        kinds = document_kinds(passages, off, heads) if "document-kinds" not in off else {}
        metas = metas if "release-dates" in off else release_dates(passages, kinds, metas)
        scores, found = await asyncio.to_thread(read_passages, passages, asked, metas, config.duplicate_similarity)
        scores = scores if "document-topic" in off else document_relevance(passages, asked, scores)
        scores = scores if "erratum-topic" in off else about_what_it_corrects(passages, kinds, scores)
        vouched = {h.passage.id for h in passages
                   if trust is not None and entry_for(h.passage.metadata, trust, h.passage.id) is not None}
        read = Documents(metas, kinds, scores, found, unverified, vouched, notes)
        closing = "month-moment" not in off
        vetting = vet(passages, read, config.relevance, as_of(question.text, closing), asks_about_drafts(asked), off,
                      by_date=not names_a_year(asked, closing), now=asks_now(asked))
        return (vetting if "named-newest" in off else _with_names(vetting, passages, asked)), read

    async def _answered(self, question: Question, asked: str, vetting: Vetting, read: Documents,
                        passages: list[RetrievedPassage]) -> tuple[Vetting, tuple[str, list[str], bool]]:
        """The answer over the vetted passages; asked once more without the cited passages the rules overrule
        (``overruled``), whose answer stands unless it is unknown."""
        first = await self._answer(asked, vetting, question)
        if first[2] and "second-look" not in vetting.off and (looked := await self._second_look(asked, vetting,
                                                                                             question, passages)):
            return looked
        text, citations, unknown = first
        losers = {} if unknown or "overruled" in vetting.off else \
            overruled(text, citations, vetting.shown, asked, vetting, read.metas, read.kinds)
        if not losers:
            return vetting, first
        again = vetting.without(losers)
        _say_asked_again(vetting, losers)
        _show_ranked(again, passages)
        second = await self._answer(asked, again, question)
        return (vetting, first) if second[2] else (again, second)

    async def _second_look(self, asked: str, vetting: Vetting, question: Question, passages: list[RetrievedPassage]
                           ) -> tuple[Vetting, tuple[str, list[str], bool]] | None:
        """An "unknown" asked once more over the sentences answering in the question's words (``second_look``): the
        vetting with their passages shown first, so the answer's marks number them as the output does, and the
        answer; None when no sentence does or the model still says "unknown"."""
        sentences = answering_sentences(asked, vetting.shown, vetting.relevant)
        if not sentences:
            return None
        looked = {h.passage.id for h in sentences}
        ordered = replace(vetting, shown=[h for h in vetting.shown if h.passage.id in looked] +
                          [h for h in vetting.shown if h.passage.id not in looked])
        _say_second_look(sentences)
        _show_ranked(ordered, passages)  # whole passages, numbered as the second answer's marks number them
        text, citations, unknown = await self._answer(asked, replace(vetting, shown=sentences), question)
        if unknown:
            _show_ranked(vetting, passages)  # the first answer's order stands
            return None
        return ordered, (text, citations, False)

    async def _answer(self, asked: str, vetting: Vetting, question: Question) -> tuple[str, list[str], bool]:
        """``concat``'s cited answer over the shown passages, labelled, with the rule of their order."""
        methods, config = self.settings.methods, self.settings.section(LedgerConfig)
        shown = labelled(vetting)
        if config.vetted_evidence == "sentences":
            shown = [hit.model_copy(update={"passage": hit.passage.model_copy(update={"text": key_sentences(
                hit.passage.text, asked, hit.passage.title, config.vetted_sentences)})}) for hit in shown]
        messages = cited_answer_messages(asked, shown, methods.passage_words, question.user_contexts)
        several = f"\n{SEVERAL_RULE}" if "several-answers" not in vetting.off and asks_for_several(asked) else ""
        messages[0] = messages[0].model_copy(update={"content": f"{messages[0].content}\n{VETTED_RULE}{several}"})
        with stage("answer"), streamed_answer():
            reply = await self.llm.adecide(cited_answer_decision(messages, vetting.shown, methods.answer_tokens),
                                           answer_params(self.llm, methods))
        return read_cited_answer(reply, vetting.shown)
