"""QA readers for D-F1: the configured LLM (works offline) or a Hugging Face extractive model.

The paper reads responses with a RoBERTa model fine-tuned on SQuAD 2.0; users with hub access set
``eval.reader: deepset/roberta-base-squad2`` (or a local folder). Reader calls are evaluation
cost, so they are cached but not charged to the method being scored.
"""

from __future__ import annotations

from typing import Any

from tanglerag.errors import ReaderError
from tanglerag.llm.client import LLM
from tanglerag.text import first_answer_line, is_unknown
from tanglerag.trace import Message

QA_READER_SYSTEM = (
    "You read a text and answer a question with a short phrase copied from the text. "
    "If the text does not answer it, write: unknown"
)


def reader_messages(response: str, sub_question: str) -> list[Message]:
    """The response first: the sub-questions of one response share it as a prefix."""
    return [Message(role="system", content=QA_READER_SYSTEM),
            Message(role="user", content=f"Text: {response}\n\nQuestion: {sub_question}\nAnswer:")]


class LLMReader:
    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def read(self, text: str, question: str) -> str:
        # always a text call, whatever llm.structured says: the reader is the measuring instrument, held fixed so
        # that runs with and without structured outputs are scored alike
        reply = self.llm.complete(reader_messages(text, question), self.llm.params(max_tokens=24, stop=["\n"]))
        line = first_answer_line(reply.text)
        return "" if is_unknown(line) else line


class HFReader:
    """An extractive QA model (SQuAD 2.0 style) through transformers; loaded on first use.

    Decoded here rather than by a pipeline (transformers 5 dropped the question-answering one):
    the best span of at most ``max_answer_tokens`` in the text, or "" when the no-answer score wins.
    """

    def __init__(self, model: str, device: str = "cpu", max_answer_tokens: int = 30) -> None:
        self.model = model
        self.device = device
        self.max_answer_tokens = max_answer_tokens
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            try:
                from transformers import AutoModelForQuestionAnswering, AutoTokenizer
            except ImportError as exc:  # an extra: the default install has no torch
                raise ReaderError(f"QA reader {self.model!r} needs transformers and torch: "
                                  "pip install 'tanglerag[st]'") from exc
            try:
                tokenizer = AutoTokenizer.from_pretrained(self.model)
                model = AutoModelForQuestionAnswering.from_pretrained(self.model).to(self.device).eval()
            except (OSError, ValueError) as exc:
                raise ReaderError(f"cannot load QA reader {self.model!r}: {exc}") from exc
            self._loaded = (tokenizer, model)
        return self._loaded

    def read(self, text: str, question: str) -> str:
        tokenizer, model = self._load()
        import torch  # after the load, which says what to install when it is missing

        enc = tokenizer(question, text, truncation="only_second", max_length=384, return_offsets_mapping=True,
                        return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        in_text = [sid == 1 for sid in enc.sequence_ids(0)]
        with torch.no_grad():
            out = model(**{k: v.to(self.device) for k, v in enc.items()})
        start, end = out.start_logits[0].tolist(), out.end_logits[0].tolist()
        best, span = start[0] + end[0], None  # position 0 scores "no answer"
        for i, i_ok in enumerate(in_text):
            if not i_ok:
                continue
            for j in range(i, min(i + self.max_answer_tokens, len(in_text))):
                if in_text[j] and start[i] + end[j] > best:
                    best, span = start[i] + end[j], (offsets[i][0], offsets[j][1])
        return text[span[0]:span[1]].strip() if span else ""


def build_reader(name: str, llm: LLM) -> LLMReader | HFReader:
    return LLMReader(llm) if name == "llm" else HFReader(name)
