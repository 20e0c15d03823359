"""Rule ``range-end``: an opening time given for a closing time, or the other way round, read from its range.

Opening hours are written as ranges ("Sunday 10am-4pm", "09:30 - 17:00"), and the 1.5B model asked when a place
closes answers with the range's first time (h-copper-kettle-1: "10am" for the Sunday close of "Sunday 10am-4pm").
When the question asks when something closes, ends or finishes and the answer's time starts a range in a cited
sentence, it is read as the range's end; asked when it opens, starts or begins, a range's end is read as its start.
"""

from __future__ import annotations

import itertools
import re

from tanglerag.methods.ledger.dissent import answer_value, sentence_values, split_sentences
from tanglerag.text import strip_citations
from tanglerag.types import RetrievedPassage

_CLOSING = re.compile(r"\b(?:close|closes|closing|shut|shuts|finish|finishes|end|ends|until)\b", re.IGNORECASE)
_OPENING = re.compile(r"\b(?:open|opens|opening|start|starts|begin|begins)\b", re.IGNORECASE)
_JOIN = r"\s*(?:-|\u2013|\u2014|to|until|till)\s*"


def range_end(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str) -> tuple[str, str]:
    """The answer with its time read as the other end of the range a cited sentence states it in, where the
    question asks for that end (module docstring), and the rule's words; the answer and "" otherwise (a question
    asking for both ends or neither, a time in no range)."""
    closing, opening = bool(_CLOSING.search(question)), bool(_OPENING.search(question))
    first, newline, rest = answer.partition("\n")
    said = answer_value(first)
    if closing == opening or said is None or said.kind != "clock":
        return answer, ""
    for hit in (h for h in passages if h.passage.id in cited):
        for sentence in split_sentences(hit.passage.text):
            times = [(v, span) for v, span in sentence_values(sentence, True) if v.kind == "clock"]
            for (a, span_a), (b, span_b) in itertools.pairwise(times):
                if not re.search(re.escape(span_a) + _JOIN + re.escape(span_b), sentence):
                    continue
                if closing and a.same(said) or opening and b.same(said):
                    other, why = (span_b, "opens") if closing else (span_a, "closes")
                    return first.replace(strip_citations(first).strip(), other, 1) + newline + rest, \
                        f"range-end: {span_a if closing else span_b} {why} {span_a}-{span_b}"
    return answer, ""
