"""Prompt pieces and answer steps that two method families share: the cited answer over all passages
(concat, CDIT's answerer) and post-fusion's single-context answer prompt (post-fusion, and concat when
``methods.concat_prompt=post_fusion`` so the two strategies are compared with one prompt)."""

from __future__ import annotations

from tanglerag.config import MethodsConfig
from tanglerag.llm.base import GenerationParams, Message
from tanglerag.llm.client import LLM
from tanglerag.text import (
    UNKNOWN,
    cited_numbers,
    drop_dangling_citations,
    first_answer_line,
    is_unknown,
    number_passages,
)
from tanglerag.types import RetrievedPassage


def answer_params(llm: LLM, config: MethodsConfig) -> GenerationParams:
    """Short one-line answers; ``config.samples`` of them at the sampling temperature when > 1."""
    sampling = config.samples > 1
    return llm.params(max_tokens=config.answer_tokens, stop=["\n"], n=config.samples,
                      temperature=config.sample_temperature if sampling else None)


CITED_ANSWER_SYSTEM = (
    "You answer a question using only the numbered passages you are given. "
    "Reply with one line: a short answer of a few words, then the number of each passage that supports it "
    "in square brackets, for example: Marie Curie [2]. "
    "If none of the passages gives the answer, reply with the single word: unknown"
)


def cited_answer_messages(question: str, passages: list[RetrievedPassage], max_words: int | None = None,
                          user_contexts: list[str] | None = None) -> list[Message]:
    """``user_contexts`` (what is known about the asking user) go before the question when given."""
    about = "".join(f"About the user: {c}\n" for c in user_contexts or [])
    user = f"Passages:\n{number_passages(passages, max_words)}\n\n{about}Question: {question}\nAnswer:"
    return [Message(role="system", content=CITED_ANSWER_SYSTEM), Message(role="user", content=user)]


def parse_cited_answer(raw: str, passages: list[RetrievedPassage]) -> tuple[str, list[str], bool]:
    """Return (answer text with its [n] markers, cited passage ids, is_unknown).

    Markers pointing outside the passage list are dropped, from the citations and from the text.
    """
    line = first_answer_line(raw)
    if is_unknown(line):
        return UNKNOWN, [], True
    line = drop_dangling_citations(line, len(passages))
    return line, [passages[n - 1].passage.id for n in cited_numbers(line)], False


FORMAT_EXAMPLES = (
    "Answers are short factoid phrases, for example:\n"
    "Q: Which band recorded the album OK Computer? A: Radiohead\n"
    "Q: In which city is the Alhambra palace? A: Granada\n"
    "Q: In what year did the Berlin Wall fall? A: 1989"
)

SINGLE_PASSAGE_SYSTEM = (
    "Answer the question with a short phrase taken from the given context.\n"
    f"{FORMAT_EXAMPLES}\n"
    "Give your best extractive guess. If the context does not contain the answer, reply with the single word: unknown"
)


def single_passage_messages(question: str, passage: str) -> list[Message]:
    user = f"Question: {question}\n\nContext:\n{passage}\n\nQuestion: {question}\nAnswer:"
    return [Message(role="system", content=SINGLE_PASSAGE_SYSTEM), Message(role="user", content=user)]
