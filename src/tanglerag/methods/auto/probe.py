"""The tangle probe: cheap signals from the passages first, one batched LLM call only when they do not decide.

Cheap signals: how many passages, the top score's lead, near-duplicate pairs (word-set overlap), distinct titles, the
named entities the passages name (spaCy: how many, how many in several passages, how many passages name one of the
question's), and, when the index has BM25, how much its top k agrees with dense search's. They are recorded for
``tanglerag diagnose``; they decide the plain cases (no passage: low-coverage; one passage, or copies of one: clean).
Otherwise one call asks for each passage's answer and the descriptor that tells its entity apart from others with the
same name (COrg's extraction, batched): one answer is clean; different answers with different descriptors are
ambiguous; different answers for the same (or no) descriptor conflict; both at once is mixed; no answer at all is
low-coverage.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from pydantic import BaseModel, Field

from tanglerag.index.passage_index import PassageIndex
from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision, numbered_reply, numbered_values, partly_numbered
from tanglerag.stages.entities import named_entities
from tanglerag.text import clip_words, is_unknown, normalize_answer
from tanglerag.trace import Message
from tanglerag.types import RetrievedPassage


class PassageAnswer(BaseModel):  # one passage's answer and the descriptor of what it is about, as the call gives
    answer: str = Field(max_length=80)
    descriptor: str = Field(max_length=80)


@dataclass
class TangleFinding:
    """The probe's result: the tangle, why, the signals behind it and, when the call was made, each passage's answer."""

    tangle: str
    why: str
    signals: dict[str, float | int | str] = field(default_factory=dict)
    passages: dict[int, PassageAnswer] | None = None  # by passage number, when the call was made


PROBE_SYSTEM = (
    "You read numbered passages and a question. A name in the question may belong to several people, places or "
    "works. For each passage give its answer to the question in a few words (or unknown if it gives none) and the "
    "descriptor that tells which one it is about (a place, a year, a kind of thing), or none."
)
PROBE_TEXT = (
    "Write one line for every passage, from [1] to [{last}], as: [n] answer | descriptor. For example:\n"
    "[1] 1963 | the basketball player\n[2] unknown | none\n[3] 1956 | the computer scientist"
)
PROBE_JSON = ('Reply with JSON with one key per passage (passage_1 for [1]), each {"answer": "...", '
              '"descriptor": "..."}.')


def cheap_signals(passages: list[RetrievedPassage], overlap: float) -> dict[str, float | int | str]:
    words = [set(normalize_answer(h.passage.text).split()) for h in passages]
    duplicates = sum(len(a & b) / max(1, len(a | b)) >= overlap for a, b in combinations(words, 2))
    scores = [h.score for h in passages]
    return {"passages": len(passages), "near_duplicate_pairs": duplicates,
            "pairs": len(passages) * (len(passages) - 1) // 2,
            "top_score_lead": round(scores[0] - scores[1], 3) if len(scores) > 1 else 0.0,
            "distinct_titles": len({h.passage.title for h in passages if h.passage.title})}


def entity_signals(question: str, passages: list[RetrievedPassage]) -> dict[str, float | int | str]:
    asked, *named = named_entities([question, *(h.passage.text for h in passages)])
    counts = Counter(entity for found in named for entity in found)
    asked_words = {word for entity in asked for word in entity.split()}  # "michael jordan" in "michael i. jordan"
    return {"distinct_entities": len(counts), "entities_in_several_passages": sum(c > 1 for c in counts.values()),
            "passages_naming_a_question_entity": sum(any(asked_words & set(e.split()) for e in found)
                                                     for found in named)}


def ranking_signals(question: str, index: PassageIndex | None, k: int) -> dict[str, float | int | str]:
    """Share of the top k that dense search and BM25 agree on (low: the words and the meaning point apart)."""
    if index is None or index.bm25 is None or k == 0:
        return {}
    dense, sparse = ({h.passage.id for h in index.search(question, k, mode)} for mode in ("dense", "bm25"))
    return {"dense_bm25_agreement": round(len(dense & sparse) / k, 3)}


def decide_cheaply(signals: dict[str, float | int | str]) -> TangleFinding | None:
    if signals["passages"] == 0:
        return TangleFinding("low-coverage", "nothing was retrieved", signals)
    if signals["passages"] == 1:
        return TangleFinding("clean", "one passage", signals)
    if signals["near_duplicate_pairs"] == signals["pairs"]:
        return TangleFinding("clean", f"all {signals['passages']} passages are near-copies of one another", signals)
    return None


def probe_decision(question: str, passages: list[RetrievedPassage], words: int | None,
                   tokens: int) -> Decision[BaseModel]:
    numbers = tuple(range(1, len(passages) + 1))
    reply = numbered_reply("Probe", "passage", numbers, PassageAnswer)
    block = "\n\n".join(f"[{n}] {clip_words(h.passage.text, words)}" for n, h in enumerate(passages, 1))

    def messages(task: str) -> list[Message]:
        return [Message(role="system", content=PROBE_SYSTEM),
                Message(role="user", content=f"Passages:\n{block}\n\nQuestion: {question}\n{task}")]

    def read(text: str) -> BaseModel:
        found = {}
        for line in text.splitlines():
            head, _, rest = line.strip().partition("]")
            number = head.lstrip("[").strip()
            if number.isdigit() and int(number) in numbers and rest.strip():
                answer, _, descriptor = rest.partition("|")
                found[int(number)] = PassageAnswer(answer=answer.strip()[:80], descriptor=descriptor.strip()[:80])
        return partly_numbered(reply, "passage", found)

    budget = tokens * len(numbers) + 8
    return Decision(reply=reply, json_messages=messages(PROBE_JSON), json_tokens=budget + 8 * len(numbers),
                    text_messages=messages(PROBE_TEXT.format(last=len(numbers))), text_tokens=budget,
                    parse_text=read)


def gives_answer(given: PassageAnswer) -> bool:
    return bool(given.answer.strip()) and not is_unknown(given.answer)


def named_descriptor(given: PassageAnswer) -> str:
    """The descriptor, normalized; empty when the passage names none."""
    descriptor = normalize_answer(given.descriptor)
    return descriptor if descriptor and not is_unknown(descriptor) and descriptor != "none" else ""


def classify(per_passage: dict[int, PassageAnswer], signals: dict[str, float | int | str]) -> TangleFinding:
    """The tangle from each passage's answer and descriptor (passages the reply left out count as not answering)."""
    answering = {n: r for n, r in per_passage.items() if gives_answer(r)}
    answers = {normalize_answer(r.answer) for r in answering.values()}
    signals = {**signals, "answering_passages": len(answering), "distinct_answers": len(answers)}
    if not answering:
        return TangleFinding("low-coverage", "no passage answers the question", signals, per_passage)
    if len(answers) == 1:
        return TangleFinding("clean", f"{len(answering)} answering passage(s) agree", signals, per_passage)
    entities = conflicts = 0
    for a, b in combinations(answering.values(), 2):
        if normalize_answer(a.answer) == normalize_answer(b.answer):
            continue
        da, db = named_descriptor(a), named_descriptor(b)
        if da and db and da != db:
            entities += 1
        else:
            conflicts += 1
    signals |= {"pairs_about_different_entities": entities, "pairs_in_conflict": conflicts}
    if entities and conflicts:
        return TangleFinding("mixed", f"{len(answers)} answers, some for different entities, some in conflict",
                             signals, per_passage)
    if entities:
        return TangleFinding("ambiguous", f"{len(answers)} answers for entities told apart by their descriptors",
                             signals, per_passage)
    return TangleFinding("conflicting", f"{len(answers)} answers for the same entity", signals, per_passage)


def signals_of(question: str, passages: list[RetrievedPassage], overlap: float, entities: bool,
               index: PassageIndex | None) -> dict[str, float | int | str]:
    """Every signal that needs no model. ``probe`` runs it in a worker thread: the index is searched twice and spaCy
    reads every passage, neither of which should hold up the event loop."""
    signals = cheap_signals(passages, overlap) | ranking_signals(question, index, len(passages))
    if entities and passages:
        signals |= entity_signals(question, passages)
    return signals


async def probe(llm: LLM, question: str, passages: list[RetrievedPassage], *, overlap: float, words: int | None,
                tokens: int, entities: bool = True, index: PassageIndex | None = None) -> TangleFinding:
    signals = await asyncio.to_thread(signals_of, question, passages, overlap, entities, index)
    cheap = decide_cheaply(signals)
    if cheap is not None:
        return cheap
    found = await probe_passages(llm, question, passages, words=words, tokens=tokens)
    return classify(found, {**signals, "unread_passages": len(passages) - len(found)})


async def probe_passages(llm: LLM, question: str, passages: list[RetrievedPassage], *, words: int | None,
                         tokens: int) -> dict[int, PassageAnswer]:
    """The probe's one call: each passage's answer and descriptor, by passage number (a text reply may leave some
    out)."""
    numbers = list(range(1, len(passages) + 1))
    return numbered_values(await llm.adecide(probe_decision(question, passages, words, tokens)), "passage", numbers)
