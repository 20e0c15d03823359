"""``ledger``: answers as the evidence decides, with the conflicts it found and how each was settled.

One call per passage reads the claim it makes (answer, what it is about, the words that state it), in one batch. The
rest needs no model: a quote not found in its passage supports nothing; copies and versions of one document, and
documents of one source, are one witness; answers about the same thing that differ are a conflict, settled by the
policies in ``ledger.policies``; answers about different things stand side by side. Only the ``prior`` policy asks
the model again (once a question, only when reached). The answer lists every kept answer with what it is about and
its citations, in the multi-answer shape, and the disputed ones ``ledger.show_disputed`` lets through, marked; the
``ConflictStep`` in the trace holds the claims and the reports.
"""

from __future__ import annotations

import asyncio
import datetime
import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from tanglerag.conflicts import (
    DEFAULT_AUTHORITY_TIERS,
    Claim,
    ConflictReport,
    ConflictStep,
    DocumentMeta,
    Side,
    answer_in_passage,
    parse_authority,
)
from tanglerag.dating import release_date, stated_date
from tanglerag.errors import InputError
from tanglerag.llm.structured import Decision
from tanglerag.methods.base import CONFLICT_METRICS, Method, MethodOutput, make_method
from tanglerag.methods.ledger.claims import answered_claims, read_claims, read_claims_together
from tanglerag.methods.ledger.config import LedgerConfig
from tanglerag.methods.ledger.dissent import answer_value, asks_a_moment, in_place_of
from tanglerag.methods.ledger.independence import Independence, file_of, independence
from tanglerag.methods.ledger.kinds import DocumentKind, asks_about_drafts, document_kind
from tanglerag.methods.ledger.moment import timeless
from tanglerag.methods.ledger.policies import Evidence, resolve
from tanglerag.methods.ledger.presentation import answer_text, set_aside_lines, withheld
from tanglerag.methods.ledger.prompts import prior_messages
from tanglerag.methods.ledger.reading import kept_passages, mark_off_answer, read_answer
from tanglerag.methods.ledger.relevance import missing_names, relevance
from tanglerag.methods.ledger.scope import select_scope
from tanglerag.methods.ledger.sides import Sameness, build_sides, things
from tanglerag.methods.ledger.values import asked_dimension, fits
from tanglerag.text import UNKNOWN, first_answer_line
from tanglerag.tracking import record_step, stage
from tanglerag.trust import TrustConfig, apply_trust, same_source_elsewhere
from tanglerag.types import Passage, Question, RetrievedPassage


class PriorReply(BaseModel):
    answer: str = Field(max_length=120)


def _read_prior(text: str) -> PriorReply:
    return PriorReply.model_construct(answer=first_answer_line(text).rstrip(".") or UNKNOWN)


async def settle(groups: list[list[Side]], policies: list[str], evidence: Evidence) -> list[ConflictReport]:
    """A report for every group of sides about one thing that disagree, and one listing the things answered alone
    when the passages answer for several things. Groups are settled in turn: the first to reach ``prior`` asks."""
    reports = [await resolve(group, _about(group), policies, evidence) for group in groups if len(group) > 1]
    alone = [group[0] for group in groups if len(group) == 1]
    if len(groups) > 1 and alone:
        reports.append(ConflictReport(kind="complementary", sides=alone,
                                      rule="different things: " + "; ".join(s.about or s.answer for s in alone)))
    return reports


def _about(group: list[Side]) -> str:
    return next((s.about for s in group if s.about), "")


def passage_relevance(passages: list[RetrievedPassage], question: str) -> dict[str, float]:
    """Each passage's share of the question's content words, its title, named source and file path counted with its
    text (a company's help page need not repeat the company's name, nor a newsletter of autumn 2022 its year)."""
    return {hit.passage.id: relevance(question, described(hit)) for hit in passages}


def document_relevance(passages: list[RetrievedPassage], question: str,
                       scores: dict[str, float]) -> dict[str, float]:
    """``scores`` with each chunk at least as on topic as its document's retrieved chunks read together: a changelog's
    chunk saying "the default `--timeout` is now 60 seconds" names neither the project nor the request, which the
    chunk above it does, and read alone it fell below the threshold beside the older release it replaces
    (e-quenby-cli-1). A document retrieved as one chunk keeps the score it has."""
    chunks: dict[object, list[RetrievedPassage]] = {}
    for hit in passages:
        chunks.setdefault(file_of(hit), []).append(hit)
    out = dict(scores)
    for group in (g for g in chunks.values() if len(g) > 1):
        together = relevance(question, "\n".join(described(hit) for hit in group))
        for hit in group:
            out[hit.passage.id] = max(out.get(hit.passage.id, 0.0), together)
    return out


def described(hit: RetrievedPassage) -> str:
    """A passage's words with what names it: its title, its named source and its file's path."""
    return f"{hit.passage.title} {hit.passage.text} {_source(hit)} {_path(hit)}"


def _path(hit: RetrievedPassage) -> str:
    path = hit.passage.metadata.get("path")
    return re.sub(r"[/_.-]+", " ", path) if isinstance(path, str) else ""


def _source(hit: RetrievedPassage) -> str:
    source = hit.passage.metadata.get("source")
    return source if isinstance(source, str) else ""


def read_passages(passages: list[RetrievedPassage], asked: str, metas: dict[str, DocumentMeta],
                  similarity: float) -> tuple[dict[str, float], Independence]:
    """What the passages tell without the model: each one's relevance to the question, and which are one document or
    one source. ``arun`` runs it in a worker thread: the texts are compared pairwise, and the first relevance loads
    scikit-learn's stop words (about a second), neither of which should hold up the event loop."""
    return passage_relevance(passages, asked), independence(passages, metas, similarity)


def mark_relevance(claims: list[Claim], scores: dict[str, float], threshold: float) -> None:
    """Each claim's share of the question's words, and whether it reaches ``ledger.relevance``: the ledger reads
    claims from passages that reach it only, so its own are all relevant; the mark stays for claims handed in."""
    for claim in claims:
        claim.relevance = scores[claim.passage_id]
        claim.relevant = claim.relevance >= threshold


def provenance(passages: list[RetrievedPassage], tiers: dict[str, float], trust: TrustConfig | None = None,
               text_dates: bool = True, name_dates: bool = True) -> tuple[dict[str, DocumentMeta], list[str], set[str]]:
    """Each passage's date, source and authority, read with the tiers in force after the ``trust`` setting has
    taken out what its document may not declare (and bounded its authority), the lines saying what trust changed,
    and the passages whose declarations it ignored. Why a refusal names the passage and, for a tier, the setting: an index keeps tiers as written, so one
    built under other ``ledger.authority_tiers`` can hold a tier these settings lack, and "unknown tier" alone does
    not say where to look."""
    trust = trust if trust is not None else TrustConfig()
    top = max(tiers.values(), default=0.0)
    metas, notes, undatable, ignored = {}, [], set(), set()
    unread_dates = {source for source, read in (("text", text_dates), ("name", name_dates)) if not read}  # ablations
    for hit in passages:
        metadata = hit.passage.metadata
        if metadata.get("date_from") in unread_dates:
            metadata = {k: v for k, v in metadata.items() if k not in ("date", "date_from")}
        trusted = apply_trust(metadata, trust, top, tiers, hit.passage.id)
        notes += [n for n in trusted.notes if n not in notes]
        if trusted.metadata.get("date_from_text") is False:
            undatable.add(hit.passage.id)
        if trusted.ignored:
            ignored.add(hit.passage.id)
        try:
            metas[hit.passage.id] = DocumentMeta.from_metadata(trusted.metadata, tiers)
        except InputError as exc:
            raise InputError(f"passage {hit.passage.id!r}: {exc}{_tiers_hint(hit.passage.metadata, tiers)}") from None
    notes += same_source_elsewhere({h.passage.id: (_text(h.passage.metadata.get("source")),
                                                   _text(h.passage.metadata.get("path"))) for h in passages})
    return (dated_by_text(passages, metas, undatable) if text_dates else metas), notes, ignored


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _opens_document(hit: RetrievedPassage) -> bool:
    """Whether a passage is its document's first chunk, whose first lines are the document's head."""
    return bool(hit.passage.metadata.get("chunk", 0) == 0)


def dated_by_text(passages: list[RetrievedPassage], metas: dict[str, DocumentMeta],
                  undatable: Collection[str] = ()) -> dict[str, DocumentMeta]:
    """Passages whose metadata gives no date, dated by the date their document's words give it ("As of June 12,
    2018, ...", "updated in 2019:"), as many documents carry theirs in the text only: a stamp in one chunk dates
    every retrieved chunk of its file (``path``) or record (``source_id``). Marked in ``meta`` as ``date_from:
    text``, so a reader can tell it from a date the metadata gave."""
    document = {h.passage.id: file_of(h) for h in passages}
    # a date the file's name gave at indexing yields to one its words give (a stamp in a chunk the whole-file read
    # missed)
    undated = {pid for pid, meta in metas.items() if meta.date is None} | \
        {h.passage.id for h in passages if h.passage.metadata.get("date_from") == "name"}
    stamps: dict[object, tuple[datetime.date, str]] = {}
    for hit in passages:
        if hit.passage.id in undatable:  # the trust setting does not let its document declare a date
            continue
        if hit.passage.id in undated and (stated := stated_date(hit.passage.text, _opens_document(hit))) is not None:
            stamps.setdefault(document[hit.passage.id], stated)
    for pid, meta in metas.items():
        stated = stamps.get(document[pid]) if pid in undated and pid not in undatable else None
        if stated is not None:
            metas[pid] = meta.model_copy(update={"date": stated[0], "date_precision": stated[1],
                                                 "meta": {**meta.meta, "date_from": "text"}})
    return metas


def release_dates(passages: list[RetrievedPassage], kinds: Mapping[str, str],
                  metas: dict[str, DocumentMeta]) -> dict[str, DocumentMeta]:
    """``metas`` with each chunk of release notes dated by the release whose notes it holds (``dating.release_date``):
    dated as the file, 3.0.0's "raised from 30 s to 45 s" stood level with 3.2.0's "now 60 seconds" (e-quenby-cli-1).
    A date the metadata declared (front matter, the operator's) is left; only one the file's words or name gave is
    refined."""
    out = dict(metas)
    for hit in passages:
        meta, metadata = metas[hit.passage.id], hit.passage.metadata
        if kinds.get(hit.passage.id) == "changelog" and (meta.date is None or metadata.get("date_from") in ("text", "name")) \
                and (released := release_date(metadata.get("section"), hit.passage.text)) is not None \
                and released != meta.date:
            out[hit.passage.id] = meta.model_copy(update={"date": released, "date_precision": "day"})
    return out


def document_kinds(passages: list[RetrievedPassage], off: Collection[str] = (),
                   heads: Mapping[str, Passage] | None = None) -> dict[str, DocumentKind]:
    """What each passage's document says it is, for those that say (most say nothing). What a file's (``path``) or
    record's (``source_id``) first chunk says it is ("Correction:", "DRAFT") its other chunks are too, as the chunk a
    question retrieves is often one without the head; a later chunk speaks for itself only (a handbook's section
    that mentions "the draft of 2021" is no draft). ``heads``: the first chunk of a passage's document by passage id,
    read from the index when the search did not find it (an RFC's "Status: Draft" above the summary it found).
    ``off``: the rules turned off; without ``informal`` a blog, forum or chat post is an ordinary document."""
    def kind_of(passage: Passage) -> DocumentKind | None:
        kind = document_kind(passage.metadata, passage.title, passage.text)
        return None if kind == "informal" and "informal" in off else kind

    own = {hit.passage.id: kind for hit in passages if (kind := kind_of(hit.passage)) is not None}
    opened = {file_of(hit): kind for hit in passages if (kind := own.get(hit.passage.id)) is not None
              and _opens_document(hit)}
    read = {pid: kind for pid, head in (heads or {}).items() if (kind := kind_of(head)) is not None}
    return {hit.passage.id: kind for hit in passages
            if (kind := own.get(hit.passage.id) or opened.get(file_of(hit)) or read.get(hit.passage.id)) is not None}


def check_claims(claims: list[Claim], question: str, kinds: dict[str, DocumentKind], texts: dict[str, str],
                 off: set[str]) -> None:
    """The claim rules of ``ledger.rules`` that need no model: a claim whose passage does not name what the question
    names (``asked-names``), one naming no amount of the kind the question asks for (``answer-type``), and one read
    from a draft the question does not ask about (``drafts``) compete for nothing; each is marked with the rule and
    why; a claim of a value its passage names only as replaced is read as the value replacing it (``replaced-value``).
    ``texts``: each passage's words with its title, source and path."""
    dimension = asked_dimension(question) if "answer-type" not in off else None
    drafts = "drafts" not in off and not asks_about_drafts(question)
    for claim in claims:
        missing = missing_names(question, texts.get(claim.passage_id, "")) if "asked-names" not in off else []
        if missing:
            claim.dropped_by = f"asked-names: the passage does not name {', '.join(sorted(missing))}"
        elif dimension is not None and not fits(claim.answer, dimension):
            claim.dropped_by = f"answer-type: the question asks for {dimension}"
        elif drafts and kinds.get(claim.passage_id) == "draft":
            claim.dropped_by = "drafts: read from a draft or proposal, not in force"
        elif "replaced-value" not in off:
            reread_claim(claim, texts.get(claim.passage_id, ""))


def reread_claim(claim: Claim, text: str) -> None:
    """A claim whose answer its passage names only as what a change replaced ("close at 16:00 on Saturdays instead
    of 17:00" read as 17:00) is the value the passage gives in its place (rule ``replaced-value``): counted as a
    witness of 17:00 it would outvote the change it reports. The caller turns the rule off for a question naming a
    year or an "as of" date (``asks_a_moment``), which may ask for the replaced value."""
    said = answer_value(claim.answer)
    instead = in_place_of(said, text) if said is not None else None
    if instead is not None:
        claim.read_as = f"replaced-value: the passage names {claim.answer} only as what {instead[1]} replaced"
        claim.answer, claim.answer_found = instead[1], answer_in_passage(instead[1], text)


def _tiers_hint(metadata: Mapping[str, Any], tiers: dict[str, float]) -> str:
    """Where tier names come from, when the passage's authority is a name the tiers lack; else nothing."""
    authority = metadata.get("authority")
    try:
        parse_authority(authority, tiers)
    except InputError:
        if isinstance(authority, str):
            return (f"; ledger.authority_tiers names the tiers, and setting it replaces the default ones "
                    f"({', '.join(DEFAULT_AUTHORITY_TIERS)})")
    return ""


class LedgerMethod(Method):
    name: ClassVar[str] = "ledger"
    paper: ClassVar[str] = "ours"
    description: ClassVar[str] = ("a claim with its quote from each passage, claims about other questions left out; "
                                  "copies count once; conflicts settled by supersession, dates, authority, witnesses "
                                  "and provenance (optionally the model's prior); what is set aside is named and why")
    calls: ClassVar[str] = ("one per passage on the question's topic (ledger.relevance), batched (+1 when the prior "
                            "policy is reached)")
    default_metrics: ClassVar[tuple[str, ...]] = CONFLICT_METRICS

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        if not passages:
            return MethodOutput.abstain()
        config = self.settings.section(LedgerConfig)
        off = set(config.disabled_rules)
        metas, trusted, untrusted = provenance(passages, config.authority_tiers,
                                    self.settings.trust if "trust" not in off else None, "text-dates" not in off,
                                    "name-dates" not in off)
        kinds = document_kinds(passages, off) if "document-kinds" not in off else {}
        closing = "month-moment" not in off
        asked = timeless(question.text, closing)
        scores, found = await asyncio.to_thread(read_passages, passages, asked, metas, config.duplicate_similarity)
        on_topic = [h for h in passages if scores[h.passage.id] >= config.relevance]
        off_topic = [h.passage.id for h in passages if scores[h.passage.id] < config.relevance]
        claims, unread = await self._claims(question.model_copy(update={"text": asked}), on_topic, config)
        mark_relevance(claims, scores, config.relevance)
        texts = {hit.passage.id: described(hit) for hit in passages}
        moment = {"replaced-value"} if asks_a_moment(question.text, closing) else set()  # the replaced value may be asked
        check_claims(claims, asked, kinds, texts, off | moment)
        if "scope" not in off:
            select_scope(claims, asked, found.document, texts)
        sides = build_sides(claims, found, {hit.passage.id: hit.passage.text for hit in passages
                                            if scores[hit.passage.id] >= config.relevance},
                            values="same-value" not in off)
        evidence = Evidence(question=question.text, metas=metas, ask_prior=lambda: self._prior(question.text),
                            found=found, weights=config.provenance_weights, kinds=kinds,
                            files={h.passage.id: str(h.passage.metadata.get("path") or h.passage.id)
                                   for h in passages},
                            ignored=untrusted, closing=closing)
        sameness = Sameness(found, config.about_similarity if config.same_thing == "about" else None, asked,
                            {hit.passage.id: f"{hit.passage.title} {hit.passage.text}" for hit in passages},
                            config.description_overlap)
        in_time = frozenset(id(s) for s in sides if evidence.moment and evidence.newest_date(s) is not None)
        reports = await settle(things(sides, sameness, in_time), [p for p in config.policies if p not in off],
                               evidence)
        dates = {pid: meta.date for pid, meta in metas.items() if meta.date is not None}
        held = withheld(reports, found, config.show_disputed, evidence)
        step = ConflictStep(claims=claims, reports=reports, policies=list(config.policies),
                            documents={pid: meta for pid, meta in metas.items() if not meta.is_empty()},
                            copies=found.copies(dates), unread=unread, off_topic=off_topic,
                            withheld=[s.answer for s in held],
                            kinds=dict(kinds), trust=trusted)
        if config.answer_from == "passages":
            aside, aside_ids = set_aside_lines(sides, held, passages, evidence)
            kept = kept_passages(on_topic, claims, sides, held)
            out = await read_answer(self.llm, self.settings, question, kept, aside, aside_ids)
            mark_off_answer(reports, out.text)
        else:
            text, citations, parts = answer_text(sides, held, passages, evidence)
            out = MethodOutput(text, citations, unknown=not parts, parts=parts)
        record_step(step)
        return out

    async def _claims(self, asked: Question, passages: list[RetrievedPassage],
                      config: LedgerConfig) -> tuple[list[Claim], list[str]]:
        """Each passage's claim, by the ledger's own call or from another method's answers (none, and no call,
        when every passage is about another question)."""
        if not passages:
            return [], []
        if config.claims_from in ("quotes", "brief"):
            return await read_claims(self.llm, asked.text, passages, self.settings.methods.passage_words,
                                     config.claim_tokens, brief=config.claims_from == "brief")
        if config.claims_from == "together":
            return await read_claims_together(self.llm, asked.text, passages, self.settings.methods.passage_words,
                                              config.together_tokens)
        return await answered_claims(make_method(config.claims_from, self.resources), asked, passages), []

    async def _prior(self, question: str) -> str:
        """The model's own answer, no passages (the ``prior`` policy's one call)."""
        budget = self.settings.section(LedgerConfig).prior_tokens
        with stage("prior"):
            reply = await self.llm.adecide(Decision(
                reply=PriorReply, json_messages=prior_messages(question, as_json=True), json_tokens=budget + 16,
                text_messages=prior_messages(question), text_tokens=budget, parse_text=_read_prior))
        return reply.answer.strip() if reply is not None and reply.answer.strip() else UNKNOWN
