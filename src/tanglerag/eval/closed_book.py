"""The post-fusion paper's dataset filter: drop questions the LLM answers right without any passage.

What remains measures how well a method uses retrieved context rather than the model's memory.
"""

from __future__ import annotations

from tanglerag.datasets.base import QAExample
from tanglerag.llm.client import LLM
from tanglerag.text import best_over, exact_match, first_answer_line, is_unknown
from tanglerag.trace import Message

CLOSED_BOOK_SYSTEM = ("Answer the question from your own knowledge with a short factoid phrase. "
                      "If you do not know, reply with the single word: unknown")


def answers_without_context(llm: LLM, example: QAExample) -> bool:
    messages = [Message(role="system", content=CLOSED_BOOK_SYSTEM),
                Message(role="user", content=f"Question: {example.question}\nAnswer:")]
    line = first_answer_line(llm.complete(messages, llm.params(max_tokens=24, stop=["\n"])).text)
    return not is_unknown(line) and best_over(exact_match, line, example.answers) == 1.0


def filter_closed_book(llm: LLM, examples: list[QAExample]) -> list[QAExample]:
    return [ex for ex in examples if not answers_without_context(llm, ex)]
