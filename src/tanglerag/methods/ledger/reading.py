"""``ledger.answer_from=passages``: the answer read by the model from the passages the ledger kept, not assembled
from the claims; the conflict reports then describe that answer.

Why: the 1.5B model's one-claim-a-passage reading is the weak link on people's documents (a bare "5" for "5
consecutive nights", a sentence for an answer, the wrong number of a table); read with every kept passage in view,
as ``concat`` reads, it answers better, while the ledger still decides which passages may speak (what was superseded,
corrected, drafted, planted outside the trusted folders, about another entity or of the wrong kind is left out) and
still reports what it set aside and why. A report whose answers the model's answer does not name (a complementary
one: fewer than two) is marked ``off_answer``: it describes passages the answer does not rest on (the 1.5B model's
claims split one value into several "things" or dispute a number of another sentence), so it does not make the
question's conflict kind. One call more than the claims, with ``concat``'s prompt: when nothing is set
aside it is ``concat``'s own call, answered from the cache if ``concat`` was asked.
"""

from __future__ import annotations

from tanglerag.conflicts import Claim, ConflictReport, Side
from tanglerag.llm.client import LLM
from tanglerag.methods.base import MethodOutput
from tanglerag.methods.ledger.values import same_value
from tanglerag.settings import Settings
from tanglerag.stages.generate import answer_params, cited_answer_decision, cited_answer_messages, read_cited_answer
from tanglerag.text import asserted_text, normalize_answer, strip_citations
from tanglerag.tracking import stage, streamed_answer
from tanglerag.types import Question, RetrievedPassage


def kept_passages(passages: list[RetrievedPassage], claims: list[Claim], sides: list[Side],
                  held: list[Side]) -> list[RetrievedPassage]:
    """The passages the answer may be read from, the kept sides' first: every passage but those whose claim a rule
    dropped or whose side was set aside or held back. None when no claim competes at all (nothing answers the
    question about what it asks: the answer is that the documents do not say)."""
    if not any(c.competes for c in claims):
        return []
    silenced = {c.passage_id for c in claims if not c.competes}
    silenced |= {p for s in sides if s.verdict == "rejected" or any(s is h for h in held) for p in s.passages}
    favoured = [p for s in sides if s.verdict == "kept" for p in s.passages]
    order = {pid: i for i, pid in enumerate(dict.fromkeys(favoured))}
    shown = [hit for hit in passages if hit.passage.id not in silenced]
    return sorted(shown, key=lambda hit: order.get(hit.passage.id, len(order)))


async def read_answer(llm: LLM, settings: Settings, question: Question, chosen: list[RetrievedPassage],
                      aside: list[str], aside_ids: list[str]) -> MethodOutput:
    """``concat``'s answer over ``chosen``, then the ledger's ``Set aside:`` lines."""
    if not chosen:
        return MethodOutput("\n".join(["unknown", *aside]), aside_ids, unknown=True)
    config = settings.methods
    messages = cited_answer_messages(question.text, chosen, config.passage_words, question.user_contexts)
    with stage("answer"), streamed_answer():
        reply = await llm.adecide(cited_answer_decision(messages, chosen, config.answer_tokens),
                                  answer_params(llm, config))
    text, citations, unknown = read_cited_answer(reply, chosen)
    return MethodOutput("\n".join([text, *aside]), citations + [p for p in aside_ids if p not in citations],
                        unknown=unknown)


def mark_off_answer(reports: list[ConflictReport], answer: str) -> None:
    """Mark the reports the answer does not concern: a dispute none of whose answers it names, a complementary
    report fewer than two of whose answers it names."""
    lines = [strip_citations(line) for line in asserted_text(answer).splitlines() if line.strip()]
    for report in reports:
        named = sum(any(names(line, side.answer) for line in lines) for side in report.sides)
        report.off_answer = named < (2 if report.kind == "complementary" else 1)


def names(line: str, answer: str) -> bool:
    """The line states the answer: its words within the line's, or one value written another way."""
    said, wanted = normalize_answer(line), normalize_answer(answer)
    return (bool(wanted) and f" {wanted} " in f" {said} ") or same_value(line, answer)
