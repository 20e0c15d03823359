"""Prompt pieces and answer steps that two method families share: the cited answer over all passages
(concat, CDIT's answerer) and post-fusion's single-context answer prompt (post-fusion, and concat when
``methods.concat_prompt=post_fusion`` so the two strategies are compared with one prompt)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from tanglerag.config import MethodsConfig
from tanglerag.llm.base import GenerationParams
from tanglerag.llm.client import LLM, Request
from tanglerag.llm.structured import Decision
from tanglerag.text import (
    UNKNOWN,
    cited_numbers,
    drop_dangling_citations,
    first_answer_line,
    is_unknown,
    number_passages,
)
from tanglerag.trace import Message
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


class CitedAnswer(BaseModel):
    answer: str = Field(max_length=160)
    passages: list[int]


@cache
def cited_answer_reply(shown: int) -> type[CitedAnswer]:
    """``CitedAnswer`` whose passage numbers lie in 1..shown."""
    return create_model("BoundedCitedAnswer", __base__=CitedAnswer,
                        passages=(list[Annotated[int, Field(ge=1, le=shown)]], Field(max_length=shown)))


CITED_JSON = ('Reply with JSON: the short answer, or unknown, and the numbers of the passages that support it, '
              'for example {"answer": "Marie Curie", "passages": [2]}.')
SHORT_JSON = 'Reply with JSON: {"answer": "the short answer, or unknown"}.'


def with_json_reply(messages: list[Message], instruction: str) -> list[Message]:
    """The text prompt with the JSON reply asked for at the end of its system message (the rest, and so the
    prefix the llama.cpp KV cache shares, unchanged)."""
    system, *rest = messages
    return [system.model_copy(update={"content": f"{system.content}\n{instruction}"}), *rest]


def cited_answer_decision(messages: list[Message], passages: list[RetrievedPassage],
                          max_tokens: int) -> Decision[CitedAnswer]:
    """The one-line cited answer as a decision: JSON with bounded passage numbers, or the line with [n] marks."""
    def read(text: str) -> CitedAnswer:  # the [n] marks stay in the answer line
        return CitedAnswer.model_construct(answer=parse_cited_answer(text, passages)[0], passages=[])

    return Decision(reply=cited_answer_reply(len(passages)), json_messages=with_json_reply(messages, CITED_JSON),
                    json_tokens=max_tokens + 16, text_messages=messages, text_tokens=max_tokens, parse_text=read,
                    shown=cited_answer_so_far)


def cited_answer_so_far(decoded: dict[str, Any]) -> str:
    """A JSON cited answer as ``read_cited_answer`` will write it, as far as it is decoded ("Paris [2]")."""
    answer = decoded.get("answer")
    numbers = decoded.get("passages")
    marks = "".join(f"[{n}]" for n in numbers if isinstance(n, int)) if isinstance(numbers, list) else ""
    text = answer if isinstance(answer, str) else ""
    return f"{text} {marks}" if marks else text


def read_cited_answer(reply: CitedAnswer | None, passages: list[RetrievedPassage]) -> tuple[str, list[str], bool]:
    """(answer with its [n] marks, cited ids, is_unknown) from either way of asking."""
    if reply is None:
        return UNKNOWN, [], True
    marks = "".join(f"[{n}]" for n in dict.fromkeys(reply.passages))
    return parse_cited_answer(f"{reply.answer} {marks}".strip(), passages)


async def short_answers(llm: LLM, prompts: list[list[Message]], params: GenerationParams) -> list[list[str]]:
    """Each prompt's answer lines, the prompts asked as one batch. One sample each: asked as decisions (JSON under
    ``llm.structured``); several samples stay text, since a schema call returns one reply."""
    if params.n == 1:
        replies = await llm.adecide_many([Decision(reply=ShortAnswer, json_messages=with_json_reply(m, SHORT_JSON),
                                                   json_tokens=params.max_tokens + 8, text_messages=m,
                                                   text_tokens=params.max_tokens, parse_text=read_short_answer)
                                          for m in prompts], params)
        return [[first_answer_line(r.answer) if r is not None else ""] for r in replies]
    completions = await llm.acomplete_many([Request(m, params) for m in prompts])
    return [[first_answer_line(t) for t in c.texts] for c in completions]


class ShortAnswer(BaseModel):
    answer: str = Field(max_length=160)


def read_short_answer(text: str) -> ShortAnswer:
    return ShortAnswer.model_construct(answer=first_answer_line(text))


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
