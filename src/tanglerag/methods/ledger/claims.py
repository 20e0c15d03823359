"""The claims ledger: one call per passage (a batch, so a server's slots answer in parallel) for the claim it makes,
read under the JSON schema or from text lines. A claim whose quote is not in its passage is marked unsupported, and
one whose answer's words are not there either is not grounded: both by comparing normalised text, never by asking
the model. With ``ledger.claims_from`` naming a method, the claims are that method's answers, one passage at a time
(recall and rejection: what answering each passage alone finds, then the ledger's rules reject what is refuted)."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from tanglerag.conflicts import Claim, answer_in_passage, quote_in_passage
from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision
from tanglerag.methods.base import Method
from tanglerag.methods.ledger.prompts import brief_claim_messages, claim_messages, claims_messages
from tanglerag.text import clip_words, first_answer_line, is_unknown, number_passages
from tanglerag.tracking import stage
from tanglerag.types import Question, RetrievedPassage


class ClaimReply(BaseModel):
    """The quote comes first: decoded in order, the answer then follows the words the model picked out."""

    quote: str = Field(max_length=300)
    answer: str = Field(max_length=120)
    about: str = Field(max_length=120)


_LINE = re.compile(r"^\W*(quote|answer|about)\s*:\s*(.*)$", re.IGNORECASE)


def read_claim_lines(text: str) -> ClaimReply | None:
    """``Quote:``, ``Answer:`` and ``About:`` lines, in any order; without an Answer line the reply is read as its
    first line (a small model often answers in a sentence). None when nothing is left."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match:
            found.setdefault(match[1].lower(), match[2].strip().strip('"'))
    answer = found.get("answer") or ("" if found else first_answer_line(text))
    if not answer:
        return None
    return ClaimReply.model_construct(quote=found.get("quote", ""), answer=answer.rstrip("."),
                                      about=found.get("about", ""))


class BriefReply(BaseModel):
    answer: str = Field(max_length=120)
    about: str = Field(max_length=120)


def read_brief_lines(text: str) -> BriefReply | None:
    """``Answer:`` and ``About:`` lines, read as ``read_claim_lines`` reads them."""
    claim = read_claim_lines(text)
    return None if claim is None else BriefReply.model_construct(answer=claim.answer, about=claim.about)


def _decision(question: str, document: str, budget: int, brief: bool) -> Decision[ClaimReply | BriefReply]:
    """One passage's claim call: with a quote (``claim_messages``), or brief (``brief_claim_messages``)."""
    if brief:
        return Decision(reply=BriefReply, json_messages=brief_claim_messages(question, document, as_json=True),
                        json_tokens=budget + 32, text_messages=brief_claim_messages(question, document),
                        text_tokens=budget, parse_text=read_brief_lines)
    return Decision(reply=ClaimReply, json_messages=claim_messages(question, document, as_json=True),
                    json_tokens=budget + 32, text_messages=claim_messages(question, document),
                    text_tokens=budget, parse_text=read_claim_lines)


async def read_claims(llm: LLM, question: str, passages: list[RetrievedPassage], words: int, budget: int, *,
                      brief: bool = False) -> tuple[list[Claim], list[str]]:
    """Every passage's claim (passages that answer nothing give none), and the ids of passages whose reply could
    not be read. ``brief`` (``ledger.claims_from=brief``): the call writes no quote, and the quote is the passage's
    sentence that holds the answer's words (none: not supported)."""
    decisions = [_decision(question, clip_words(hit.passage.text, words), budget, brief) for hit in passages]
    with stage("claims"):
        replies = await llm.adecide_many(decisions)
    claims, unread = [], []
    for hit, reply in zip(passages, replies, strict=True):
        if reply is None:
            unread.append(hit.passage.id)
        elif reply.answer.strip() and not is_unknown(reply.answer):
            text, answer = hit.passage.text, reply.answer.strip()
            if isinstance(reply, ClaimReply):
                quote, supported = reply.quote.strip(), quote_in_passage(reply.quote, text)
            else:
                quote = sentence_holding(answer, text)
                supported = bool(quote)
            claims.append(Claim(answer=answer, about=reply.about.strip(), quote=quote, passage_id=hit.passage.id,
                                supported=supported, answer_found=answer_in_passage(answer, text)))
    return claims, unread


class DocumentClaim(BaseModel):
    document: int
    answer: str = Field(max_length=120)
    about: str = Field(default="", max_length=120)


class DocumentClaims(BaseModel):
    claims: list[DocumentClaim] = Field(max_length=64)


_CLAIM_LINE = re.compile(r"^\W*\[(\d+)\]\s*(.+?)\s*(?:\|\s*(.*))?$")


def read_document_lines(text: str) -> DocumentClaims | None:
    """``[n] answer | about`` lines; None when there is none."""
    found = [DocumentClaim.model_construct(document=int(m[1]), answer=m[2].strip().rstrip("."), about=(m[3] or "").strip())
             for line in text.splitlines() if (m := _CLAIM_LINE.match(line.strip()))]
    return DocumentClaims.model_construct(claims=found) if found else None


async def read_claims_together(llm: LLM, question: str, passages: list[RetrievedPassage], words: int,
                               budget: int) -> tuple[list[Claim], list[str]]:
    """Every passage's claims from one call over all of them (``ledger.claims_from=together``): a claim names its
    passage by number; its quote is the passage's sentence that holds the answer's words (none: not supported). A
    reply that cannot be read leaves every passage unread."""
    decision = Decision(reply=DocumentClaims, json_messages=claims_messages(question, number_passages(passages, words),
                                                                             as_json=True),
                        json_tokens=budget * len(passages) + 32,
                        text_messages=claims_messages(question, number_passages(passages, words)),
                        text_tokens=budget * len(passages), parse_text=read_document_lines)
    with stage("claims"):
        reply = await llm.adecide(decision)
    if reply is None:
        return [], [hit.passage.id for hit in passages]
    claims = []
    for item in reply.claims:
        if not 1 <= item.document <= len(passages) or not item.answer.strip() or is_unknown(item.answer):
            continue
        text = passages[item.document - 1].passage.text
        quote = sentence_holding(item.answer, text)
        claims.append(Claim(answer=item.answer.strip(), about=item.about.strip(), quote=quote,
                            passage_id=passages[item.document - 1].passage.id, supported=bool(quote),
                            answer_found=answer_in_passage(item.answer, text)))
    return claims, []


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def sentence_holding(answer: str, text: str) -> str:
    """The first sentence of ``text`` that holds every word of ``answer`` ('' for none): the words a claim read
    together with the others rests on, found in the passage rather than asked of the model."""
    return next((s.strip() for s in _SENTENCE.split(text) if s.strip() and answer_in_passage(answer, s)), "")


async def answered_claims(method: Method, question: Question, passages: list[RetrievedPassage]) -> list[Claim]:
    """Claims read from another method's answers (``ledger.claims_from``), one passage at a time so each answer
    belongs to the passage it was read from: the answer and its descriptor, no quote. Why one at a time: a method
    given every passage merges equal answers and cites as the model pleases, and the ledger must know which
    passage says what to count witnesses and versions. Awaited in turn, not gathered, so the trace records the
    calls in the passages' order."""
    claims = []
    for hit in passages:
        for part in (await method.arun_named(question, [hit])).parts:
            if part.answer.strip() and not is_unknown(part.answer):
                claims.append(Claim(answer=part.answer.strip(), about=part.descriptor.strip(),
                                    passage_id=hit.passage.id,
                                    answer_found=answer_in_passage(part.answer, hit.passage.text)))
    return claims
